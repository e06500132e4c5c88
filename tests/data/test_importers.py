import contextlib
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from primebench_tasks.cli import main
from primebench_tasks.data.importers import (
    import_matrix,
    parse_release_date,
    read_model_metadata,
    read_wide_csv,
)
from primebench_tasks.data.panel import Panel
from primebench_tasks.errors import InputError


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_items_x_models(tmp_path):
    f = write(tmp_path, "a.csv", "model_sha,mA,mB\n0,1,0\n1,,1\n")
    w = read_wide_csv(f)
    assert w.orientation == "items-x-models"
    rec = w.scores.set_index(["model", "item_id"])["score"]
    assert rec[("mA", "0")] == 1 and np.isnan(rec[("mA", "1")]) and rec[("mB", "1")] == 1


def test_models_x_items_with_conditions(tmp_path):
    f = write(
        tmp_path,
        "m.csv",
        ",1,2,<no_image>1,<no_image>2,<no_question>1\nmA,1,0,1,0,0\nmB,0,1,0,0,1\n",
    )
    panel, rep = import_matrix(f, "MathVista_MINI")
    assert sorted(panel.conditions) == ["blind", "no_question", "vl"]
    np.testing.assert_array_equal(panel.matrix("MathVista_MINI"), [[1, 0], [0, 1]])
    np.testing.assert_array_equal(panel.matrix("MathVista_MINI", "blind"), [[1, 0], [0, 0]])
    nq = panel.matrix("MathVista_MINI", "no_question")
    assert nq[0, 0] == 0 and nq[1, 0] == 1 and np.isnan(nq[:, 1]).all()


@pytest.mark.parametrize(
    "text, match",
    [
        ("", "empty"),
        (",1,<weird>1\nmA,1,0\n", r"unknown condition prefix <weird>"),
        (",1,2\nmA,1,x\n", r"row 2, field '2': non-numeric score 'x'"),
        (",1,2\nmA,1,0\nmA,0,0\n", r"row 3.*duplicate key 'mA'"),
        (",1,2\nmA,1,2\n", r"row 2, field '2'.*outside the metric range"),
        ("id,<no_image>1\n<no_image>x,1\n", "mixed orientation"),
        (",1,2\nmA,1\n", "row 2: row has 2 cells"),
    ],
)
def test_bad_csv(tmp_path, text, match):
    f = write(tmp_path, "bad.csv", text)
    with pytest.raises(InputError, match=match) as e:
        import_matrix(f, "AI2D_TEST")
    assert str(f) in str(e.value)


def test_item_metadata_join(tmp_path):
    scores = write(tmp_path, "s.csv", ",1,2,3\nmA,1,0,1\nmB,0,1,1\n")
    meta = write(
        tmp_path,
        "items.jsonl",
        "\n".join(
            json.dumps(r)
            for r in [
                {
                    "id": "1",
                    "question": "q1",
                    "options": ["A", "B"],
                    "answer": "A",
                    "image": "img/1.jpg",
                },
                {"id": "2", "question": "q2", "options": [], "answer": "3"},
            ]
        )
        + "\n",
    )
    with pytest.raises(InputError, match=r"1 item id\(s\) in the response file are absent"):
        import_matrix(scores, "MATH-Vision_MINI", items=meta)
    panel, rep = import_matrix(scores, "MATH-Vision_MINI", items=meta, restrict_to_items=True)
    assert list(panel.item_ids("MATH-Vision_MINI")) == ["1", "2"]
    assert any("1 scored items outside" in n for n in rep.notes)
    it = panel.items_of("MATH-Vision_MINI").set_index("item_id")
    assert json.loads(it.loc["1", "options"]) == ["A", "B"]
    assert it.loc["1", "image_ref"].endswith("img/1.jpg")
    extra = write(
        tmp_path,
        "more.json",
        json.dumps(
            {
                "1": {"question": "a"},
                "9": {"question": "b"},
                "2": {"question": "c"},
                "3": {"question": "d"},
            }
        ),
    )
    with pytest.raises(InputError, match=r"1 item id\(s\) in the metadata file have no column"):
        import_matrix(scores, "MATH-Vision_MINI", items=extra)


def test_autojudger_model_metadata(tmp_path):
    f = write(tmp_path, "m.csv", "models,参数量,单位,发布时间\nA,938,M,2024.11\nB,7,B,2024.1\n")
    df = read_model_metadata(f).set_index("model")
    assert df.loc["A", "release_date"] == "2024-11-01"  # .11 is November
    assert df.loc["B", "release_date"] == "2024-01-01"
    assert df.loc["A", "params_b"] == pytest.approx(0.938)
    assert parse_release_date("2024-03-15", "f", 2) == "2024-03-15"
    with pytest.raises(InputError, match=r"row 2, field 'release_date'"):
        parse_release_date("2024.13", "f", 2)


def test_cli_import_appends(tmp_path, capsys):
    a = write(tmp_path, "a.csv", "model_sha,mA,mB\n0,1,0\n1,0,1\n")
    b = write(tmp_path, "b.csv", "model_sha,mA,mB,mC\n0,1,0,1\n")
    out = tmp_path / "panel"
    assert (
        main(["panel", "import", "--scores", str(a), "--benchmark", "AI2D_TEST", "--out", str(out)])
        == 0
    )
    assert (
        main(
            [
                "panel",
                "import",
                "--scores",
                str(b),
                "--benchmark",
                "mybench",
                "--category",
                "Chart Understanding",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    p = Panel.load(out)
    assert p.model_names == ["mA", "mB", "mC"]
    assert np.isnan(p.matrix("AI2D_TEST")[2]).all()
    assert (
        main(["panel", "import", "--scores", str(b), "--benchmark", "mybench2", "--out", str(out)])
        == 2
    )
    assert "--category" in capsys.readouterr().err


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(alphabet=st.sampled_from(list(',\n01.5ab<>_-"x ')), max_size=80))
def test_malformed_csv_never_crashes(tmp_path, text):
    f = tmp_path / "fuzz.csv"
    f.write_text(text, encoding="utf-8")
    with contextlib.suppress(InputError):  # a clear error is fine; any other is a bug
        import_matrix(f, "AI2D_TEST")


@settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=64))
def test_binary_garbage_never_crashes(tmp_path, data):
    f = tmp_path / "fuzz.csv"
    f.write_bytes(data)
    with contextlib.suppress(InputError):  # a clear error is fine; any other is a bug
        import_matrix(f, "AI2D_TEST")


def test_quoted_line_breaks_stay_in_keys_and_ambiguous_names_are_refused(tmp_path):
    """A quoted line break in an id is kept (was silently removed: "m\\nA" → "mA"); empty and
    white-space-padded model names are refused with row and field."""
    from primebench_tasks.data.importers import read_wide_csv
    from primebench_tasks.errors import InputError

    f = tmp_path / "a.csv"
    f.write_text('item,"m\nA",mB\ni1,1,0\n"i\n2",0,1\n', encoding="utf-8")
    df = read_wide_csv(f, "items-x-models").scores
    assert set(df["model"]) == {"m\nA", "mB"} and set(df["item_id"]) == {"i1", "i\n2"}
    f.write_text("item,,mB\ni1,1,0\n", encoding="utf-8")
    with pytest.raises(InputError, match="empty column name"):
        read_wide_csv(f, "items-x-models")
    f.write_text("item,mA ,mA\ni1,1,0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"row 1, field 'mA ': column name 'mA ' has leading"):
        read_wide_csv(f, "items-x-models")
    f.write_text("model,i1\n m1,1\nm1,0\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"row 2.*white space"):
        read_wide_csv(f, "models-x-items")


def test_messages_show_plain_numbers_not_numpy_reprs(tmp_path):
    import numpy as np

    from primebench_tasks.data.importers import read_wide_csv
    from primebench_tasks.errors import InputError, shown

    assert shown(np.int64(7)) == "7" and shown(np.float32(0.5)) == "0.5" and shown("a") == "'a'"
    f = tmp_path / "a.csv"
    f.write_text("item,mA\ni1,7\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_wide_csv(f, "items-x-models")
    assert "score 7 outside" in str(e.value) and "np." not in str(e.value)


@pytest.mark.parametrize("orientation", ["models-x-items", "items-x-models"])
def test_dense_import_equals_the_records_path(tmp_path, orientation):
    """The importer builds the panel from dense matrices (no long table); it must be the panel
    the long records give: same matrices, conditions and content hash — with unsorted models,
    missing cells, a blind condition on some items, and NaN spelled three ways."""
    from primebench_tasks.data.catalogue import lookup
    from primebench_tasks.data.panel import BENCHMARK_COLUMNS

    rng = np.random.default_rng(1)
    models = ["zeta", "alpha", "mid", "beta"]
    cols = [str(i) for i in range(6)] + ["<no_image>1", "<no_image>4"]
    vals = rng.choice(["0", "1", "0.5", "", "nan", "NaN"], size=(4, len(cols)))
    if orientation == "models-x-items":
        text = (
            "model,"
            + ",".join(cols)
            + "\n"
            + "".join(m + "," + ",".join(r) + "\n" for m, r in zip(models, vals, strict=True))
        )
    else:
        cols = [str(i) for i in range(6)]
        vals = vals[:, :6]
        text = (
            "item,"
            + ",".join(models)
            + "\n"
            + "".join(c + "," + ",".join(vals[:, j]) + "\n" for j, c in enumerate(cols))
        )
    f = write(tmp_path, "m.csv", text)
    panel, rep = import_matrix(f, "MathVista_MINI")
    w = read_wide_csv(f)
    rec = w.scores.dropna(subset=["score"]).assign(benchmark="MathVista_MINI")
    spec = lookup("MathVista_MINI")
    ref = Panel.from_records(
        "MathVista_MINI",
        rec,
        pd.DataFrame({"model": models}),
        pd.DataFrame([{c: getattr(spec, c) for c in BENCHMARK_COLUMNS}]),
        pd.DataFrame(
            {
                "benchmark": "MathVista_MINI",
                "item_id": list(dict.fromkeys(i for _, i in w.columns)),
                "source_index": list(dict.fromkeys(i for _, i in w.columns)),
            }
        ),
    )
    assert panel.content_hash == ref.content_hash
    assert sorted(panel.conditions) == sorted(ref.conditions)
    for c in ref.conditions:
        np.testing.assert_array_equal(
            panel.matrix("MathVista_MINI", c), ref.matrix("MathVista_MINI", c)
        )
    assert rep.n_records == len(rec)
    assert panel.model_names == sorted(models)


def test_model_aliases_that_collide_are_refused(tmp_path):
    f = write(tmp_path, "m.csv", "model,1,2\nA,1,0\nB,0,1\n")
    with pytest.raises(InputError, match="'A' and 'B' both map to 'X'"):
        import_matrix(f, "MathVista_MINI", model_aliases={"A": "X", "B": "X"})


@pytest.mark.parametrize("bad", ['"a\nb"', '"a\tb"'])
def test_a_model_name_with_a_control_character_or_edge_space_is_refused(tmp_path, bad):
    """Battery 7 (low): ``panel import`` accepted a model named with a line break."""
    from primebench_tasks.data.importers import import_matrix

    csv = tmp_path / "s.csv"
    csv.write_text(f"item_id,{bad},m2\ni1,1,0\ni2,0,1\n")
    with pytest.raises(InputError, match="model name") as exc:
        import_matrix(csv, "B", category="Comprehensive")
    assert exc.value.file == str(csv)
