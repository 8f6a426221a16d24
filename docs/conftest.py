# pytest collects the pages (*.md) as doctest files; not Sphinx's configuration or a built site.
collect_ignore = ["conf.py"]
collect_ignore_glob = ["_build/*"]
