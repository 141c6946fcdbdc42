"""The device is resolved once per run (app/ui/model_settings.py): however many times a page's run asks for the
settings (its models, the badge, the sidebar), ``app.models.device.resolve`` runs once, and the loaders take its
answer as it is (tests/models/test_loading.py checks that they never resolve it again)."""

from app.models import device as devices
from app.ui import model_settings
from tests.conftest import require_bundled


def test_a_page_run_resolves_the_device_once(app_page, monkeypatch):
    require_bundled("bert")
    runs = []  # per run of the router: [times the settings were asked, times the device was resolved]
    resolve, this_run, forget = devices.resolve, model_settings._this_run, model_settings.forget

    def new_run():
        runs.append([0, 0])
        forget()

    def asked(*choice):
        runs[-1][0] += 1
        return this_run(*choice)

    def resolved(device, dtype):
        runs[-1][1] += 1
        return resolve(device, dtype)

    monkeypatch.setattr(model_settings, "forget", new_run)
    monkeypatch.setattr(model_settings, "_this_run", asked)
    monkeypatch.setattr(devices, "resolve", resolved)
    at = app_page("pages/attention.py")
    assert not at.exception and at.get("iframe")  # the page ran its model and drew bertviz's view
    assert runs and max(a for a, _ in runs) >= 2, runs  # a lesson's run asks for the settings again and again...
    assert all(r == (1 if a else 0) for a, r in runs), runs  # ... and each run resolves the device once
    before = len(runs)
    at.run()
    assert not at.exception and len(runs) > before and all(r == 1 for a, r in runs[before:] if a), runs
