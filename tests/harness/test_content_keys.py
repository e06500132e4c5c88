"""Row keys by content (``primebench keys lmms-eval``) for AI2D: a VLMEvalKit TSV (index =
imageId·100 + question number, JPEG in base64, a shared-image reference) matched onto an
upstream-schema AI2D stand-in (question, options, answer, PNG image; no id), then the real
upstream lmms-eval ``ai2d`` task (filters + exact_match, no process_results) run on exactly the
manifest's items and ingested by position."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from harness_adapters.lmms_eval_upstream.content_keys import build_keys, read_keys, write_keys
from primebench_tasks.cli import main
from primebench_tasks.errors import InputError
from tests.fixtures.lmms_runs import run_lmms_eval

datasets = pytest.importorskip(
    "datasets", reason="needs the 'lmms' extra (datasets): pip install -e '.[lmms]'"
)
PIL = pytest.importorskip(
    "PIL.Image", reason="needs the 'embed' extra (pillow): pip install -e '.[embed]'"
)

QUESTIONS = [  # (imageId, question number, question, options, answer index)
    (101, 1, "Which label shows the sun?", ["A", "B", "C", "D"], 0),
    (101, 2, "What eats the grass?", ["deer", "hawk", "sun", "soil"], 0),
    (102, 1, "Which label shows the sun?", ["A", "B", "C", "D"], 2),  # same text, other image
    (103, 1, "How many stages are shown?", ["2", "3", "4", "5"], 1),
    (104, 1, "What is at the top of the chain?", ["hawk", "mouse", "grass", "frog"], 0),
    (105, 1, "Which is a producer?", ["grass", "frog", "hawk", "snake"], 0),
]


def _image(seed: int):
    rng = np.random.default_rng(seed)
    blocks = (rng.random((8, 8)) > 0.5).astype(np.uint8) * 255
    return PIL.fromarray(np.kron(blocks, np.ones((8, 8), np.uint8))).convert("RGB")


def _b64_jpeg(img) -> str:
    buf = io.BytesIO()
    img.save(buf, format="JPEG", quality=85)
    return base64.b64encode(buf.getvalue()).decode()


def save_ai2d_rows(recs: list[dict], path: Path) -> Path:
    """Rows of lmms-eval's AI2D schema (question, options, answer, PNG image; an ``index``
    field where the rows have one) saved as a local ``test`` split."""
    fields = {
        "question": datasets.Value("string"),
        "options": datasets.Sequence(datasets.Value("string")),
        "answer": datasets.Value("string"),
        "image": datasets.Image(),
    }
    if recs and "index" in recs[0]:
        fields = {"index": datasets.Value("string"), **fields}
    datasets.DatasetDict(
        {"test": datasets.Dataset.from_list(recs, features=datasets.Features(fields))}
    ).save_to_disk(str(path))
    return path


def _upstream(path: Path, rows=QUESTIONS, shuffle: bool = True) -> Path:
    recs = [
        {"question": q, "options": opts, "answer": str(a), "image": _image(img)}
        for img, _n, q, opts, a in rows
    ]
    return save_ai2d_rows(recs[::-1] if shuffle else recs, path)


def _tsv(path: Path, rows=QUESTIONS) -> Path:
    lines = ["index\tquestion\tA\tB\tC\tD\tanswer\timage"]
    first: dict[int, int] = {}
    for img, n, q, opts, a in rows:
        index = img * 100 + n
        image = str(first[img]) if img in first else _b64_jpeg(_image(img))  # shared image
        first.setdefault(img, index)
        lines.append("\t".join([str(index), q, *opts, "ABCD"[a], image]))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _rows(path: Path):
    return list(datasets.load_from_disk(str(path))["test"])


def test_keys_map_every_row_by_content_and_refuse_guesses(tmp_path):
    up = _upstream(tmp_path / "ai2d")
    doc = build_keys(_tsv(tmp_path / "AI2D_TEST.tsv"), _rows(up), "ai2d", "AI2D_TEST", "x")
    assert doc["n_vlmeval_rows"] == 6 and sorted(doc["keys"]) == [
        "10101",
        "10102",
        "10201",
        "10301",
        "10401",
        "10501",
    ]
    assert len(set(doc["keys"].values())) == 6  # same question, other image: told apart
    write_keys(doc, tmp_path / "k.json")
    assert read_keys(tmp_path / "k.json") == doc
    # a TSV row with no upstream counterpart: refused, nothing written
    extra = [*QUESTIONS, (106, 1, "Not upstream?", ["a", "b", "c", "d"], 0)]
    with pytest.raises(
        InputError,
        match=r"1 TSV rows match no upstream row \(e.g. index "
        r"\['10601'\]\)",
    ):
        build_keys(_tsv(tmp_path / "x.tsv", extra), _rows(up), "ai2d", "AI2D_TEST", "x")
    # two upstream rows with one content: ambiguous
    dup = _upstream(tmp_path / "dup", [*QUESTIONS, QUESTIONS[3]])
    with pytest.raises(InputError, match="1 TSV rows match several upstream rows"):
        build_keys(_tsv(tmp_path / "y.tsv"), _rows(dup), "ai2d", "AI2D_TEST", "x")
    assert (
        main(
            [
                "keys",
                "lmms-eval",
                "--vlmeval-tsv",
                str(tmp_path / "AI2D_TEST.tsv"),
                "--upstream",
                str(up),
                "--out",
                str(tmp_path / "cli.json"),
            ]
        )
        == 0
    )
    assert read_keys(tmp_path / "cli.json")["keys"] == doc["keys"]


def test_the_run_time_check_refuses_a_corrupted_or_duplicated_dataset(tmp_path):
    """What the generated task's process_docs does when lmms-eval loads the data: a shuffled
    copy runs the items in manifest order; an item whose image was changed (matches no row) or
    that occurs twice (matches several) stops the run — a wrong mapping never scores."""
    from harness_adapters.lmms_eval_upstream.content_keys import FIELD
    from harness_adapters.lmms_eval_upstream.functions import (
        ManifestItemsMissing,
        make_process_docs,
    )

    up = _upstream(tmp_path / "ai2d")
    write_keys(
        build_keys(_tsv(tmp_path / "AI2D_TEST.tsv"), _rows(up), "ai2d", "AI2D_TEST", "x"),
        tmp_path / "keys.json",
    )
    wanted = ["10501", "10101", "10201"]
    keep = make_process_docs(wanted, FIELD, "t", content_keys=tmp_path / "keys.json")
    kept = keep(datasets.load_from_disk(str(up))["test"])
    assert list(kept[FIELD]) == wanted  # shuffled upstream, manifest order
    assert list(kept["question"]) == [QUESTIONS[5][2], QUESTIONS[0][2], QUESTIONS[2][2]]
    corrupted = [*QUESTIONS[:2], (999, 1, *QUESTIONS[2][2:]), *QUESTIONS[3:]]  # other image
    bad = _upstream(tmp_path / "corrupted", corrupted)
    with pytest.raises(ManifestItemsMissing, match=r"1 manifest item\(s\) are not in.*10201"):
        keep(datasets.load_from_disk(str(bad))["test"])
    dup = _upstream(tmp_path / "dup", [*QUESTIONS, QUESTIONS[0]])
    with pytest.raises(ManifestItemsMissing, match=r"match several rows.*10101.*duplicate"):
        keep(datasets.load_from_disk(str(dup))["test"])


def _panel_and_manifest():
    from primebench_tasks.data.panel import Panel
    from primebench_tasks.pipeline.manifest import build_manifest

    ids = [str(img * 100 + n) for img, n, *_ in QUESTIONS]
    scores = pd.DataFrame(
        [
            {
                "model": m,
                "benchmark": "AI2D_TEST",
                "item_id": i,
                "condition": "vl",
                "score": float((k + j) % 2),
            }
            for k, m in enumerate(["m1", "m2", "m3"])
            for j, i in enumerate(ids)
        ]
    )
    benchmarks = pd.DataFrame(
        [
            {
                "benchmark": "AI2D_TEST",
                "category": "Science Knowledge",
                "metric": "acc",
                "metric_kind": "binary",
                "score_min": 0.0,
                "score_max": 1.0,
                "lmms_eval_task": "ai2d",
                "vlmeval_dataset": "AI2D_TEST",
            }
        ]
    )
    panel = Panel.from_records(
        "aj",
        scores,
        pd.DataFrame({"model": ["m1", "m2", "m3"]}),
        benchmarks,
        pd.DataFrame({"benchmark": "AI2D_TEST", "item_id": ids}),
    )
    m = build_manifest(
        "primebench_ai2dkeys",
        panel,
        {"Science Knowledge": {"AI2D_TEST": np.array([0, 2, 3, 5])}},
        {},
        [],
        {"rho": None},
    )
    return panel, m


@pytest.mark.heavy
def _run_and_read(tmp_path: Path, m) -> tuple[dict, dict]:
    """Run the generated ``primebench_ai2dkeys`` tasks in lmms-eval (its dummy model) and read
    the run back: item → score, and item → gold letter."""
    from harness_adapters.harnesses.lmms_eval.ingest import read_run

    run_lmms_eval("primebench_ai2dkeys", tmp_path / "out", include=tmp_path / "tasks", cwd=tmp_path)
    recs = read_run(tmp_path / "out", suite_version=m["version"])
    gold = {str(img * 100 + n): "ABCD"[a] for img, n, _q, _o, a in QUESTIONS}
    return dict(zip(recs["item_id"], recs["score"], strict=True)), gold


def test_real_upstream_ai2d_runs_the_manifest_items_by_content_key(tmp_path):
    pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")
    from harness_adapters.harnesses.lmms_eval.taskgen import generate_tasks

    up = _upstream(tmp_path / "ai2d")
    write_keys(
        build_keys(_tsv(tmp_path / "AI2D_TEST.tsv"), _rows(up), "ai2d", "AI2D_TEST", "x"),
        tmp_path / "keys.json",
    )
    panel, m = _panel_and_manifest()
    with pytest.raises(InputError, match="no row key is known|--upstream-key"):
        generate_tasks(m, panel, tmp_path / "nokeys")
    generate_tasks(
        m, panel, tmp_path / "tasks", datasets={"ai2d": up}, content_keys=[tmp_path / "keys.json"]
    )
    yaml = (tmp_path / "tasks" / "primebench_ai2dkeys_ai2d_test.yaml").read_text()
    assert "process_results" not in yaml and "filter_list" in yaml and "item_ids" in yaml
    got, gold = _run_and_read(tmp_path, m)
    want = {i: float(gold[i] == "A") for i in ["10101", "10201", "10301", "10501"]}
    assert got == want and 0 < sum(want.values()) < len(want)
    samples = next((tmp_path / "out").rglob("*_samples_*.jsonl")).read_text().splitlines()
    assert [json.loads(x)["target"] for x in samples] == [gold[i] for i in want]


def test_bad_keys_build_inputs_are_named_not_tracebacks(tmp_path, capsys):
    """#54: a UTF-16 TSV, a missing --upstream and an --upstream that is a file were
    tracebacks; each is now one error line naming the file."""
    up = _upstream(tmp_path / "ai2d")
    tsv = _tsv(tmp_path / "AI2D_TEST.tsv")
    u16 = tmp_path / "u16.tsv"
    u16.write_bytes(tsv.read_text("utf-8").encode("utf-16"))
    cases = [
        (u16, up, "u16.tsv: the TSV is UTF-16"),
        (tsv, tmp_path / "nowhere", "nowhere, field '--upstream': no such folder"),
        (tsv, tsv, "AI2D_TEST.tsv, field '--upstream': a file, not a dataset folder"),
    ]
    for t, u, said in cases:
        args = ["keys", "lmms-eval", "--vlmeval-tsv", str(t), "--upstream", str(u)]
        assert main([*args, "--out", str(tmp_path / "k.json")]) == 2
        err = capsys.readouterr().err
        assert said in err and "Traceback" not in err, err
    assert not (tmp_path / "k.json").exists()


def test_text_keyed_rows_found_once_or_refused():
    """#55: an lmms-eval row keyed by its text (the manifest's keys, no keys file): the suite's
    item is found in the one row holding its question and answers, in manifest order; two rows
    holding it, or none, are refused naming the item — never a guess."""
    from harness_adapters.lmms_eval_upstream.functions import (
        ManifestItemsMissing,
        make_process_docs,
    )
    from primebench_tasks.data.text_keys import ocrbench_key

    keys = {
        "schema": "primebench.keys/1",
        "task": "ocrbench",
        "text_rule": "ocrbench",
        "keys": {"7": ocrbench_key("what is written?", "['B']")},
    }
    rows = [
        {"question": "What is written?", "answer": ["A"]},
        {"question": "what is written?", "answer": ["B"]},
        {"question": "Read the sign.", "answer": ["B"]},
    ]
    keep = make_process_docs(["7"], "primebench_content_key", "t", None, keys)
    got = keep(datasets.Dataset.from_list(rows))
    assert got["primebench_content_key"] == ["7"] and got["answer"] == [["B"]]
    with pytest.raises(ManifestItemsMissing, match="match several rows"):
        keep(datasets.Dataset.from_list([rows[1], rows[1]]))
    with pytest.raises(ManifestItemsMissing, match="not in the"):
        keep(datasets.Dataset.from_list([rows[0], rows[2]]))


def test_a_filter_and_metric_task_with_a_declared_key_is_scored_by_its_metric(tmp_path, capsys):
    """#82: ``tasks lmms-eval --upstream-key ai2d=FIELD`` on an upstream task scored through
    filters and a metric (no process_results) was a dead end ("declare its scorer 'metric'": no
    option did); now its own metric scores each item — the same items and scores as the content
    keys' route. Without a key, the refusal names both commands that work."""
    pytest.importorskip("lmms_eval", reason="needs the 'lmms' extra: pip install -e '.[lmms]'")
    from harness_adapters.harnesses.lmms_eval.taskgen import generate_tasks

    rows = [
        {
            "index": str(img * 100 + n),
            "question": q,
            "options": o,
            "answer": str(a),
            "image": _image(img),
        }
        for img, n, q, o, a in QUESTIONS
    ][::-1]
    up = save_ai2d_rows(rows, tmp_path / "ai2d_with_ids")
    panel, m = _panel_and_manifest()
    with pytest.raises(InputError) as e:
        generate_tasks(m, panel, tmp_path / "nokeys")
    assert "--upstream-key ai2d=FIELD" in str(e.value) and "primebench keys lmms-eval" in str(
        e.value
    )
    generate_tasks(m, panel, tmp_path / "tasks", {"ai2d": "index"}, datasets={"ai2d": up})
    yaml = (tmp_path / "tasks" / "primebench_ai2dkeys_ai2d_test.yaml").read_text()
    assert "process_results" not in yaml and "filter_list" in yaml and "item_ids" in yaml
    got, gold = _run_and_read(tmp_path, m)
    assert got == {i: float(gold[i] == "A") for i in ["10101", "10201", "10301", "10501"]}


def test_keys_match_real_images_through_a_jpeg_copy_where_their_hash_changes(tmp_path):
    """Real figures (MATH-Vision testmini's, embedded) as PNG upstream and as VLMEvalKit's JPEG
    (quality 75) in the TSV, eight of one question each: the 16 × 16 mean-hash differs between
    the two copies for some of them, yet every TSV row maps to the upstream row of its own
    image — by its text, then the nearest image."""
    from harness_adapters.lmms_eval_upstream.content_keys import fingerprint

    folder = (
        Path(__file__).resolve().parents[2] / "primebench_tasks/data/embedded/mathvision/images"
    )
    figures = [PIL.open(p).convert("RGB") for p in sorted(folder.iterdir())[:48]]
    up, lines = [], ["index\tquestion\tA\tB\tC\tD\tanswer\timage"]
    for k, img in enumerate(figures):
        q = f"What is shown in figure group {k // 8}?"
        up.append({"question": q, "options": ["a", "b", "c", "d"], "answer": "0", "image": img})
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=75)
        data = base64.b64encode(buf.getvalue()).decode()
        lines.append("\t".join([str(k), q, "a", "b", "c", "d", "A", data]))
    tsv = tmp_path / "AI2D_TEST.tsv"
    tsv.write_text("\n".join(lines) + "\n", encoding="utf-8")
    rows = _rows(save_ai2d_rows(up[::-1], tmp_path / "up"))
    jpeg = [PIL.open(io.BytesIO(base64.b64decode(x.split("\t")[-1]))) for x in lines[1:]]
    moved = sum(
        fingerprint(r["question"], r["options"], r["image"])
        != fingerprint(r["question"], r["options"], j)
        for r, j in zip(up, jpeg, strict=True)
    )
    assert moved > 0  # the hash of a re-encoded image is not the upstream one's
    doc = build_keys(tsv, rows, "ai2d", "AI2D_TEST", "x")
    want = {str(k): fingerprint(r["question"], r["options"], r["image"]) for k, r in enumerate(up)}
    assert doc["keys"] == want
