"""The suite's compilation cache (tests/conftest.py) stays bounded: past its limit, the programs
read longest ago are deleted first, down to what it keeps."""

import os

from conftest import prune


def test_prune_deletes_the_least_recently_read_programs_past_the_limit(tmp_path):
    for i in range(10):  # program i last read at time 1000 + i, 100 bytes each
        path = tmp_path / f"jit_run-{i}-cache"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + i, 5000 - i))  # (access, modification): written in the other order
    assert prune(tmp_path, limit=1000, keep=500) == 0  # at the limit: nothing deleted
    (tmp_path / "jit_run-10-cache").write_bytes(b"x" * 100)  # read now
    assert prune(tmp_path, limit=1000, keep=500) == 6
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"jit_run-{i}-cache" for i in (10, 6, 7, 8, 9)]
    assert prune(tmp_path / "absent", limit=0, keep=0) == 0
