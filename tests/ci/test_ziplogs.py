"""Run-logs zips: one LogInput per job, streamed from the archive, hostile archives refused with one line."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from repopilot.ci import ziplogs
from repopilot.ci.ziplogs import zip_log_inputs
from repopilot.core import InputError


def _zip(path: Path, members: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _read(stream_input: ziplogs.LogInput) -> bytes:
    with stream_input.open() as stream:
        return stream.read()


BUILD = b"2026-01-01T00:00:00.0000000Z ##[group]Run make\n2026-01-01T00:00:01.0000000Z error: boom\n"
TEST = b"2026-01-01T00:00:00.0000000Z FAILED tests/test_a.py::test_x\n"


def test_one_input_per_job_file_in_job_order(tmp_path: Path) -> None:
    path = _zip(tmp_path / "logs.zip", {
        "1_test.txt": TEST,
        "0_build.txt": BUILD,
        "build/1_Set up job.txt": b"setup\n",
        "build/2_Run make.txt": b"make\n",
        "test/1_Set up job.txt": b"setup\n",
    })
    inputs = zip_log_inputs(path, "logs.zip")

    assert [i.job for i in inputs] == ["build", "test"]
    assert [i.name for i in inputs] == ["build (logs.zip)", "test (logs.zip)"]
    assert all(i.source == "logs.zip" for i in inputs)
    # The job file holds the whole job; its step files are not added on top.
    assert _read(inputs[0]) == BUILD
    assert _read(inputs[1]) == TEST
    assert inputs[0].size == len(BUILD)


def test_each_open_is_a_fresh_stream(tmp_path: Path) -> None:
    inputs = zip_log_inputs(_zip(tmp_path / "l.zip", {"0_build.txt": BUILD}), "l.zip")
    first = inputs[0].open()
    assert first.read(10) == BUILD[:10]
    assert _read(inputs[0]) == BUILD
    assert first.read() == BUILD[10:]
    first.close()


def test_step_folder_without_job_file_is_joined_in_step_order(tmp_path: Path) -> None:
    path = _zip(tmp_path / "logs.zip", {
        "deploy/10_Post.txt": b"post\n",
        "deploy/2_Push.txt": b"push line without newline",
        "deploy/1_Set up job.txt": b"setup\n",
        "deploy/system.txt": b"system\n",
    })
    inputs = zip_log_inputs(path, "logs.zip")

    assert [i.job for i in inputs] == ["deploy"]
    # Numeric order (2 before 10), a newline where a step lacked one, unnumbered files last.
    assert _read(inputs[0]) == b"setup\npush line without newline\npost\nsystem\n"


def test_large_member_streams_in_pieces(tmp_path: Path) -> None:
    big = b"".join(b"2026-01-01T00:00:00.0000000Z line %d\n" % i for i in range(200_000))
    inputs = zip_log_inputs(_zip(tmp_path / "big.zip", {"0_build.txt": big}), "big.zip")
    with inputs[0].open() as stream:
        pieces = iter(lambda: stream.read(65536), b"")
        assert b"".join(pieces) == big


@pytest.mark.parametrize("name", ["../evil.txt", "/etc/evil.txt", "a/../../evil.txt", "..\\evil.txt",
                                  "C:/evil.txt", "deep/er/3_x.txt"])
def test_hostile_or_unexpected_names_are_skipped(tmp_path: Path, name: str) -> None:
    path = _zip(tmp_path / "logs.zip", {name: b"evil\n", "0_build.txt": BUILD})
    inputs = zip_log_inputs(path, "logs.zip")
    assert [i.job for i in inputs] == ["build"]
    assert _read(inputs[0]) == BUILD
    assert not (tmp_path.parent / "evil.txt").exists()


def test_zip_of_only_hostile_names_has_no_logs(tmp_path: Path) -> None:
    path = _zip(tmp_path / "logs.zip", {"../evil.txt": b"evil\n", "/abs.txt": b"x\n"})
    with pytest.raises(InputError, match="holds no job logs"):
        zip_log_inputs(path, "logs.zip")


def test_empty_zip_is_an_input_error(tmp_path: Path) -> None:
    path = _zip(tmp_path / "empty.zip", {})
    with pytest.raises(InputError, match=r"empty\.zip: the zip holds no job logs"):
        zip_log_inputs(path, "empty.zip")


def test_zip_with_only_folders_has_no_logs(tmp_path: Path) -> None:
    path = tmp_path / "dirs.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(zipfile.ZipInfo("build/"), b"")
    with pytest.raises(InputError, match="holds no job logs"):
        zip_log_inputs(path, "dirs.zip")


@pytest.mark.parametrize("content", [b"", b"not a zip at all", b"PK\x03\x04" + b"\x00" * 40])
def test_corrupt_zip_is_an_input_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.zip"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"bad\.zip: not a readable zip file"):
        zip_log_inputs(path, "bad.zip")


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such file"):
        zip_log_inputs(tmp_path / "nope.zip", "nope.zip")


def test_truncated_member_data_is_an_input_error_when_read(tmp_path: Path) -> None:
    path = _zip(tmp_path / "logs.zip", {"0_build.txt": BUILD * 100}, compression=zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    start = data.index(b"##[group]")
    data[start:start + 9] = b"XXXXXXXXX"  # the CRC no longer matches
    path.write_bytes(bytes(data))
    inputs = zip_log_inputs(path, "logs.zip")
    with pytest.raises(InputError, match="corrupt member"):
        _read(inputs[0])


def test_encrypted_member_is_refused(tmp_path: Path) -> None:
    path = _zip(tmp_path / "logs.zip", {"0_build.txt": BUILD}, compression=zipfile.ZIP_STORED)
    data = bytearray(path.read_bytes())
    # Set the "encrypted" general-purpose flag in the local header and the central directory entry.
    data[6] |= 0x1
    central = data.index(b"PK\x01\x02")
    data[central + 8] |= 0x1
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="encrypted"):
        zip_log_inputs(path, "logs.zip")


def test_zip_bomb_over_the_size_cap_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 16 MB of zeros deflates to about 16 KB; with the cap lowered to 4 MB it stands in for a real bomb.
    monkeypatch.setattr(ziplogs, "MAX_TOTAL_BYTES", 4 * 1024 * 1024)
    path = _zip(tmp_path / "bomb.zip", {"0_build.txt": b"\0" * (16 * 1024 * 1024)})
    assert path.stat().st_size < 100 * 1024
    with pytest.raises(InputError, match="over the 4,194,304 limit"):
        zip_log_inputs(path, "bomb.zip")


def test_too_many_members_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ziplogs, "MAX_MEMBERS", 5)
    path = _zip(tmp_path / "many.zip", {f"job/{i}_s.txt": b"x\n" for i in range(6)})
    with pytest.raises(InputError, match="6 members"):
        zip_log_inputs(path, "many.zip")
