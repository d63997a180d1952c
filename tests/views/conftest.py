import pytest


def pytest_addoption(parser):
    parser.addoption("--memlife", required=True, help="the memlife executable")
    parser.addoption("--make-trace", required=True, help="views_make_trace executable")
    parser.addoption("--leaky-script", required=True, help="leaky_train.py")
    parser.addoption("--python-dir", required=True, help="folder of the memlife Python module")
    parser.addoption("--lib-dir", default="", help="folder of the recorder and torch plugin")
    parser.addoption("--chromium", default="", help="chromium executable (default: search PATH)")
    parser.addoption("--screenshot-dir", default="", help="also save screenshots here")


@pytest.fixture(scope="session")
def opts(request):
    return request.config.option
