"""``predict`` on text: a flat folder of documents, a labelled folder of folders, or files one
by one; one line per document, starting with its name, in a documented order."""

from collections import Counter

import numpy as np
import pytest
from test_cli import call, one_line_error, text_corpus

from ocolearn.data.sparse_text import feature_hash
from ocolearn.data.textdirs import tokens
from ocolearn.modelfile import load

DOCUMENTS = {  # names chosen so that sorting by code point differs from the order written and from "natural" order
    "b.txt": "a great and superb film",
    "10.txt": "dull , boring , awful",
    "a.txt": "the plot is weak and the actor dull",
    "9.txt": "moving , fine , great",
    "B.txt": "the film",
}


def trained(tmp_path, capsys):
    corpus = text_corpus(tmp_path / "reviews")
    args = ["train", "--learner", "perceptron", "--format", "text", "--bits", 12, corpus, "--passes", 3]
    status, _, err = call(capsys, *args, "--model", tmp_path / "m.npz", "--quiet")
    assert status == 0, err
    return tmp_path / "m.npz", corpus


def hand_score(model, text):
    """``w . x - offset`` of a document, its bag of words hashed here by hand."""
    x = np.zeros(model.w.shape[-1])
    for word, n in Counter(tokens(text)).items():
        x[feature_hash(word, model.settings["bits"])] += n
    return float(model.w.astype(np.float64) @ x - model.offset)


def close(written, expected):
    """Equal up to the 9 significant digits ``--scores`` writes."""
    return abs(written - expected) <= 1e-8 * max(1.0, abs(expected))


def lines_of(out):
    return [line.split("\t") for line in out.splitlines()]


def test_predict_on_a_flat_folder_names_each_document_in_sorted_order(tmp_path, capsys):
    model, _ = trained(tmp_path, capsys)
    folder = tmp_path / "new"
    folder.mkdir()
    for name, text in DOCUMENTS.items():
        (folder / name).write_text(text)
    status, out, err = call(capsys, "predict", model, folder, "--scores")
    assert status == 0, err
    rows = lines_of(out)
    assert [name for name, _ in rows] == ["10.txt", "9.txt", "B.txt", "a.txt", "b.txt"]  # code point order
    m = load(model)
    for name, score in rows:
        assert close(float(score), hand_score(m, DOCUMENTS[name])), name
    status, out, _ = call(capsys, "predict", model, folder)
    labels = {name: label for name, label in lines_of(out)}
    assert status == 0 and labels == {name: "pos" if float(s) > 0 else "neg" for name, s in rows}
    assert labels["b.txt"] == "pos" and labels["10.txt"] == "neg"  # the corpus' own words decide


def test_predict_on_a_labelled_folder_names_label_and_file(tmp_path, capsys):
    model, corpus = trained(tmp_path, capsys)
    status, out, err = call(capsys, "predict", model, corpus)
    assert status == 0, err
    rows = lines_of(out)
    expected = sorted(f"{label}/{f.name}" for label in ("neg", "pos") for f in (corpus / label).iterdir())
    assert [name for name, _ in rows] == expected
    wrong = sum(label != name.split("/")[0] for name, label in rows)
    status, out, _ = call(capsys, "test", model, corpus)
    assert status == 0 and float(out.split()[1]) == wrong / len(rows)  # the same predictions as test's
    status, _, _ = call(capsys, "predict", model, corpus, "--out", tmp_path / "p.tsv", "--chunk-rows", 7)
    assert status == 0 and lines_of((tmp_path / "p.tsv").read_text()) == rows  # names follow across chunks


def test_predict_on_files_keeps_their_order_and_names(tmp_path, capsys):
    model, _ = trained(tmp_path, capsys)
    paths = []
    for name, text in DOCUMENTS.items():
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    status, out, err = call(capsys, "predict", model, *paths, "--scores")
    assert status == 0, err
    rows = lines_of(out)
    assert [name for name, _ in rows] == [str(p) for p in paths]
    m = load(model)
    for (name, score), text in zip(rows, DOCUMENTS.values(), strict=True):
        assert close(float(score), hand_score(m, text)), name
    status, out, _ = call(capsys, "predict", model, paths[2])  # one file: one document
    assert status == 0 and [name for name, _ in lines_of(out)] == [str(paths[2])]


def test_text_input_errors_are_one_line(tmp_path, capsys):
    model, corpus = trained(tmp_path, capsys)
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "a.txt").write_text("great film")
    for command in (["test", model, flat], ["train", "--learner", "perceptron", "--format", "text", flat]):
        extra = ["--model", tmp_path / "x.npz", "--quiet"] if command[0] == "train" else []
        status, _, err = call(capsys, *command, *extra)
        one_line_error(status, err, str(flat), "documents without labels", "one folder of text files per label")
    status, _, err = call(capsys, "predict", model, flat / "a.txt", tmp_path / "missing.txt")
    one_line_error(status, err, "missing.txt", "no such file or folder")
    (tmp_path / "empty").mkdir()
    one_line_error(*call(capsys, "predict", model, tmp_path / "empty")[::2], "empty", "no documents")
    (flat / "tab\there.txt").write_text("dull")
    one_line_error(*call(capsys, "predict", model, flat)[::2], "tab\\there.txt", "a tab or a line break")
    svm = tmp_path / "s.svm"
    svm.write_text("1 1:1\n-1 2:1\n")
    status, _, err = call(capsys, "train", "--learner", "perceptron", svm, "--model", tmp_path / "s.npz", "--quiet")
    assert status == 0, err
    status, _, err = call(capsys, "predict", tmp_path / "s.npz", svm, svm)
    one_line_error(status, err, "s.svm", "several DATA files", "text model")


def test_predict_on_a_folder_of_documents_and_folders_reads_every_document(tmp_path, capsys):
    # Before: files beside a subfolder were dropped unseen (one line for three documents), and a
    # folder of documents beside an empty folder had "no documents".
    model, _ = trained(tmp_path, capsys)
    mixed = tmp_path / "mixed"
    (mixed / "more").mkdir(parents=True)
    (mixed / "empty").mkdir()
    (mixed / ".hidden").write_text("great")
    names = {"b.txt": "b.txt", "a.txt": "a.txt", "more/9.txt": "9.txt", "more/B.txt": "B.txt"}
    for name, document in names.items():
        (mixed / name).write_text(DOCUMENTS[document])
    status, out, err = call(capsys, "predict", model, mixed, "--scores")
    assert status == 0, err
    rows = lines_of(out)
    assert [name for name, _ in rows] == ["a.txt", "b.txt", "more/9.txt", "more/B.txt"]  # by path, code point
    m = load(model)
    for name, score in rows:
        assert close(float(score), hand_score(m, DOCUMENTS[names[name]])), name
    status, out, err = call(capsys, "test", model, mixed)  # (labelled: a label folder without documents is refused)
    one_line_error(status, err, f"{mixed / 'empty'}: a label's folder without documents")
    (mixed / "empty").rmdir()
    status, out, err = call(capsys, "test", model, mixed)  # (and the files beside the folders are not read)
    one_line_error(status, err, "label 'more' is not one of the model's labels")


def test_an_output_in_the_input_folder_is_refused(tmp_path, capsys):
    # Before: predict --out reviews/pos/x.txt overwrote that document with the predictions (status
    # 0), and a model written into a label's folder was read as a document by the next run.
    model, corpus = trained(tmp_path, capsys)
    document = sorted((corpus / "pos").iterdir())[0]
    text = document.read_text()
    for command in (
        ["predict", model, corpus, "--out", document],
        ["train", "--learner", "perceptron", "--format", "text", corpus, "--model", corpus / "pos" / "m.npz"],
    ):
        status, _, err = call(capsys, *command)
        output = command[-1]
        one_line_error(status, err, f"{output}: is in the input folder {corpus}, whose files are documents")
    assert document.read_text() == text and not (corpus / "pos" / "m.npz").exists()


def test_a_label_folder_without_documents_is_refused_for_training(tmp_path, capsys):
    # Before: train made a binary model of pos and neg, the empty folder's class dropped unseen.
    corpus = text_corpus(tmp_path / "reviews")
    (corpus / "neutral").mkdir()
    (corpus / "neutral" / ".hidden").write_text("fine")
    args = ["train", "--learner", "perceptron", "--format", "text", corpus, "--model", tmp_path / "m.npz"]
    status, _, err = call(capsys, *args)
    assert (status, err) == (
        2,
        f"ocolearn: error: {corpus / 'neutral'}: a label's folder without documents; add its documents, or remove it\n",
    )
    (corpus / "neutral" / "1.txt").write_text("fine , ok")
    assert call(capsys, *args, "--quiet")[0] == 0 and load(tmp_path / "m.npz").labels == ["neg", "neutral", "pos"]


def test_a_document_whose_label_is_not_known_is_named_by_its_path(tmp_path, capsys):
    # Before: "new, document 3: label 'pr2' is not one of the model's labels" (a number in an
    # order the user does not see: the documents are shuffled), and for train's --labels and
    # --task regression "new, document N" and "numbers, line N" (not even a document).
    model, _ = trained(tmp_path, capsys)

    def folder(name, documents):
        for path, text in documents.items():
            (tmp_path / name / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name / path).write_text(text)
        return tmp_path / name

    new = folder("new", {"pos/a.txt": "great film", "neg/b.txt": "dull", "pr2/more/c.txt": "fine"})
    numbers = folder("numbers", {"1.5/a.txt": "great film", "2/b.txt": "dull", "pr2/more/c.txt": "fine"})
    train = ["train", "--learner", "ogd", "--format", "text", "--model", tmp_path / "x.npz", "--quiet"]
    for data, command, problem in (
        (new, ["test", model, new], "label 'pr2' is not one of the model's labels ['neg', 'pos']"),
        (new, [*train, new, "--labels", "pos,neg"], "label 'pr2' is not one of --labels ['pos', 'neg']"),
        (numbers, [*train, numbers, "--task", "regression"], "target 'pr2' is not a number"),
    ):
        status, _, err = call(capsys, *command)
        assert (status, err) == (2, f"ocolearn: error: {data / 'pr2' / 'more' / 'c.txt'}: {problem}\n")


MIXED = [  # ASCII (compiled) and not (word by word), with what the tokenizer must get right
    "Great film, GREAT acting; isn't it? It's 10/10 -- don''t miss_it. rock'n'roll 'quoted' end'",
    "Crème brûlée, NAÏVE café; ÉCOLE école. Straße 2024 — ½ ١٢٣ 東京 tokyo",
    "\ufeffa byte-order mark then words: Alpha alpha ALPHA",
    "",
    "\r\n\t  spaces\r\nand\tTABS__ _x_ 42 4.2 4,200 $5 e-mail o'clock ''' a'b'c",
]


@pytest.mark.parametrize("bits", [3, 18, 40])
def test_compiled_hashing_gives_the_word_by_word_rows(tmp_path, bits, monkeypatch):
    """``hashed_rows`` (ASCII documents tokenized and hashed in compiled code) gives exactly the
    rows of ``tokens``, ``feature_hash`` and ``_hashed``: the same indices in the same order, the
    same counts, with colliding words (3 bits) and without folding (40 bits)."""
    from ocolearn.data import compiled
    from ocolearn.data.textdirs import _hashed, hashed_rows, words_of

    monkeypatch.setattr(compiled, "SMALL", -1)  # (compiled however small: ``compiled.worth``)

    paths = []
    for i, text in enumerate(MIXED + [t.upper() for t in MIXED]):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_bytes(text.encode())
    counts, indices, values = hashed_rows(paths, bits)
    rows = [_hashed(words_of(p), bits) for p in paths]
    assert counts.tolist() == [len(r) for r in rows]
    assert indices.tolist() == [i for r in rows for i in r]
    assert values.tolist() == [v for r in rows for v in r.values()]
    assert rows[0][feature_hash("isn't", bits)] >= 1 and rows[0][feature_hash("10", bits)] >= 2


def test_a_folder_is_read_once_for_all_passes(tmp_path, capsys, monkeypatch):
    """Each document is read (and tokenized) once however many passes; a block of documents one
    of which has changed since is read again; the blocks of one folder are kept at a time."""
    from pathlib import Path

    from ocolearn.data.textdirs import text_blocks, text_documents, text_rows

    corpus = text_corpus(tmp_path / "reviews")
    reads = []
    read_bytes = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: reads.append(self.relative_to(corpus)) or read_bytes(self))
    args = ["train", "--learner", "perceptron", "--format", "text", "--bits", 12, corpus, "--passes", 4, "--quiet"]
    status, _, err = call(capsys, *args, "--model", tmp_path / "m.npz")
    assert status == 0, err
    assert len(reads) == len(set(reads)) == 120
    documents = text_documents(corpus, seed=0)
    block = text_rows(documents, 1, 12)
    assert text_rows(documents, 1, 12) is block and len(reads) == 120  # (kept)
    changed = next(i for i, (_, f) in enumerate(documents) if f.name == "000.txt" and f.parent.name == "pos")
    documents[changed][1].write_text("a new and longer document")
    again = text_rows(documents, 1, 12)
    a, b = again.indptr[changed : changed + 2]
    assert again.indices[a:b].tolist() == [feature_hash(w, 12) for w in "a new and longer document".split()]
    assert text_rows(documents, 1, 12) is again
    list(text_blocks(text_corpus(tmp_path / "other"), 0))  # (another folder: this one's blocks dropped)
    assert text_rows(documents, 1, 12) is not again


def test_a_folder_is_listed_again_only_when_its_names_change(tmp_path, monkeypatch):
    """The passes over a folder list it once; a document added (in a new subfolder too) or
    removed since is seen by the next pass."""
    from ocolearn.data import textdirs

    corpus = text_corpus(tmp_path / "reviews", n=5)
    listed = []
    text_documents = textdirs.text_documents
    monkeypatch.setattr(textdirs, "text_documents", lambda *a: listed.append(a) or text_documents(*a))

    def documents():
        return [f.relative_to(corpus).as_posix() for block in textdirs.text_blocks(corpus, 0) for _, f in block[0]]

    first = documents()
    assert documents() == first and len(listed) == 1 and len(first) == 10
    (corpus / "pos" / "more").mkdir()
    assert documents() == first and len(listed) == 2  # (an empty folder: no document more)
    (corpus / "pos" / "more" / "new.txt").write_text("superb")
    assert sorted(documents()) == sorted(first + ["pos/more/new.txt"]) and len(listed) == 3
    (corpus / "neg" / "000.txt").unlink()
    assert sorted(documents()) == sorted(set(first) - {"neg/000.txt"} | {"pos/more/new.txt"})
    assert documents() and len(listed) == 4
