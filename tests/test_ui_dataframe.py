"""``ui.dataframe``: plain data's Arrow form is kept by a digest of the data and is exactly what Streamlit sends for
that data (the same bytes), with the index hidden where Streamlit hides it."""

from __future__ import annotations

from streamlit import dataframe_util

from app import ui


def _streamlit_bytes(data) -> bytes:
    return dataframe_util.convert_pandas_df_to_arrow_bytes(
        dataframe_util.convert_anything_to_pandas_df(data, ensure_copy=False)
    )


def test_the_kept_arrow_form_is_what_streamlit_sends_and_is_kept():
    columns = {"": ["piece", "id"], "0": ["[CLS]", "101"], "1": ["the", "1996"]}
    records = [
        {"position": 3, "original": "ball", "p(top guess)": 0.25},
        {"position": 5, "original": "park", "p(top guess)": None},
    ]
    for data, hidden in ((columns, True), (records, True)):
        table, hides = ui.arrow_form(data)
        assert dataframe_util.convert_arrow_table_to_arrow_bytes(table) == _streamlit_bytes(data)
        assert hides is hidden  # Streamlit hides the index it made for such data
        again = ui.arrow_form(
            {k: list(v) for k, v in data.items()} if isinstance(data, dict) else [dict(r) for r in data]
        )
        assert again[0] is table  # equal data, another object: the kept table
    changed = dict(columns, **{"1": ["a", "1037"]})
    assert ui.arrow_form(changed)[0] is not ui.arrow_form(columns)[0]
    assert ui.arrow_form(changed)[0].column("1").to_pylist() == ["a", "1037"]


def test_what_is_not_plain_data_is_not_kept():
    import pandas as pd

    assert ui.arrow_form(pd.DataFrame({"a": [1]})) is None
    assert ui.arrow_form([lambda: 1]) is None  # cannot be pickled
