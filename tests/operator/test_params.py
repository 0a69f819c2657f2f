"""Operator parameters (dmlc::Parameter): parsing from Python values and from the
strings symbol JSON stores, defaults, ranges, choices, and errors that name the
operator, the field and the value."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import dagnet
from dagnet._errors import ParamError
from dagnet.operator import REQUIRED, DType, Field, NoParams, Params, Shape


class ConvParam(Params):
    kernel = Field(Shape, REQUIRED, "convolution kernel size")
    num_filter = Field(int, REQUIRED, "number of filters", low=1)
    stride = Field(Shape, (), "stride")
    no_bias = Field(bool, False, "whether to disable the bias")
    layout = Field(str, None, "data layout", choices=("NCHW", "NHWC"))
    workspace = Field(int, 1024, "workspace in MB", low=0, high=8192)
    slope = Field(float, 0.25, "leaky slope")
    dtype = Field(DType, "float32", "output dtype")


def test_parse_python_values_and_defaults():
    p = ConvParam.parse("Convolution", {"kernel": (3, 3), "num_filter": 8})
    assert p.kernel == (3, 3) and p.num_filter == 8
    assert p.stride == () and p.no_bias is False and p.layout is None and p.workspace == 1024
    assert p.slope == 0.25 and p.dtype == np.dtype("float32")


def test_parse_strings_as_symbol_json_stores_them():
    p = ConvParam.parse("Convolution", {
        "kernel": "(3, 3)", "num_filter": "8", "stride": "[2, 2]", "no_bias": "True",
        "layout": "NHWC", "workspace": "512", "slope": "0.1", "dtype": "float16"})
    assert p.kernel == (3, 3) and p.num_filter == 8 and p.stride == (2, 2)
    assert p.no_bias is True and p.layout == "NHWC" and p.workspace == 512
    assert p.slope == pytest.approx(0.1) and p.dtype == np.dtype("float16")


def test_to_strings_round_trip():
    p = ConvParam.parse("Convolution", {"kernel": 3, "num_filter": 2, "dtype": np.float64})
    strings = p.to_strings()
    assert (
        strings["kernel"] == "(3,)"
        and strings["layout"] == "None"
        and strings["dtype"] == "float64"
    )
    assert ConvParam.parse("Convolution", strings) == p


def test_missing_required_names_op_and_field():
    with pytest.raises(ParamError, match=r"'Convolution' needs parameter 'kernel'"):
        ConvParam.parse("Convolution", {"num_filter": 1})


def test_unknown_parameter_lists_the_known_ones():
    with pytest.raises(ParamError, match=r"'Convolution' has no parameter 'kernal'.*kernel"):
        ConvParam.parse("Convolution", {"kernal": 3, "num_filter": 1})


@pytest.mark.parametrize(
    "field, value, why",
    [
        ("num_filter", 0, "below the minimum"),
        ("workspace", 10**6, "above the maximum"),
        ("layout", "NCWH", "not one of the allowed values"),
        ("num_filter", "eight", "not a valid int"),
        ("no_bias", "maybe", "not a valid bool"),
        ("kernel", "(3, 'a')", "not a valid shape"),
        ("num_filter", None, "may not be None"),
    ],
)
def test_bad_values_name_op_field_and_value(field, value, why):
    kwargs = {"kernel": (3, 3), "num_filter": 4, field: value}
    with pytest.raises(ParamError) as info:
        ConvParam.parse("Convolution", kwargs)
    message = str(info.value)
    assert "'Convolution'" in message and repr(field) in message and why in message
    assert isinstance(info.value, dagnet.DagnetError) and isinstance(info.value, ValueError)


def test_params_are_immutable_compare_and_hash_by_value():
    a = ConvParam.parse("c", {"kernel": 3, "num_filter": 2})
    b = ConvParam.parse("c", {"kernel": "(3,)", "num_filter": "2"})
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    with pytest.raises(AttributeError):
        a.num_filter = 3
    c = a.replace(num_filter=5)
    assert c.num_filter == 5 and a.num_filter == 2 and c != a


def test_fields_inherit_and_document_themselves():
    class Extended(ConvParam):
        extra = Field(int, 1, "one more")

    assert list(Extended.fields())[-1] == "extra" and "kernel" in Extended.fields()
    doc = ConvParam.fields()["workspace"].doc()
    assert (
        doc.startswith("workspace : int, default=1024, range [0, 8192]")
        and "workspace in MB" in doc
    )
    assert NoParams.parse("any", {}) == NoParams()


def test_field_rejects_unknown_type():
    with pytest.raises(TypeError, match="Field type must be one of"):
        Field(list, [], "no lists")


@given(
    kernel=st.lists(st.integers(1, 9), min_size=1, max_size=3),
    num_filter=st.integers(1, 100),
    no_bias=st.booleans(),
    slope=st.floats(-1e6, 1e6, allow_nan=False),
    layout=st.sampled_from([None, "NCHW", "NHWC"]),
    dtype=st.sampled_from(["float16", "float32", "float64", "int32", "uint8"]),
)
def test_any_valid_value_survives_the_string_round_trip(
    kernel, num_filter, no_bias, slope, layout, dtype
):
    p = ConvParam.parse(
        "Convolution",
        {
            "kernel": tuple(kernel),
            "num_filter": num_filter,
            "no_bias": no_bias,
            "slope": slope,
            "layout": layout,
            "dtype": dtype,
        },
    )
    assert ConvParam.parse("Convolution", p.to_strings()) == p
