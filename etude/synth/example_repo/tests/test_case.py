import pytest
from textkit import camelize, humanize, underscore


@pytest.mark.parametrize(
    ("camel", "snake"),
    [
        ("Product", "product"),
        ("SpecialGuest", "special_guest"),
        ("HTTPServerError", "http_server_error"),
        ("Area51Controller", "area51_controller"),
    ],
)
def test_underscore(camel, snake):
    assert underscore(camel) == snake


def test_camelize():
    assert camelize("special_guest") == "SpecialGuest"
    assert camelize("special_guest", upper_first=False) == "specialGuest"
    assert camelize("__") == ""
    assert "_" not in camelize("special_guest_list")


def test_humanize():
    assert humanize("employee_salary") == "Employee salary"
    assert humanize("author_id").split() == ["Author"]
    assert humanize("EmployeeSalary") == "Employee salary"
