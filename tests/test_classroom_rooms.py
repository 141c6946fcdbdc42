"""app/classroom/rooms.py: both backends (in process, and Redis against a real redis-server) hold the same contract,
hostile input included: wrong secrets, unknown rooms, oversize and non-string answers, injection strings, rate
limits, one answer per client per question, re-answers, expiry and the bounds on rooms and answers."""

from __future__ import annotations

import json
import threading
import time

import pytest

from app.classroom import rooms as R
from app.classroom.question import MAX_ANSWER_CHARS, Question
from tests.classroom_redis import redis_server

CHOICE = Question(
    "masking",
    "Which word goes in [MASK]?",
    "choice",
    ("ball", "toy", "dog", "<script>"),
    answer=("ball",),
    model=(("ball", 0.44), ("toy", 0.3)),
    explain="secret explanation",
)
WORD = Question("masking", "Type the word", "word", answer=("ball",))
MULTI = Question("xlnet", "Which tokens may position 3 see?", "multi", ("the", "cat", "sat", "down"))
CLIENTS = [f"client-{i:04d}" for i in range(50)]


@pytest.fixture(scope="module")
def redis_url():
    with redis_server() as url:
        yield url


@pytest.fixture(params=["memory", "redis"])
def store(request):
    if request.param == "memory":
        yield R.InProcessRooms()
        return
    import redis

    url = request.getfixturevalue("redis_url")
    redis.Redis.from_url(url).flushdb()
    yield R.RedisRooms(url)


def opened(store, question=CHOICE):
    code, secret = store.create()
    assert store.ask(code, secret, question.to_dict())
    return code, secret


def test_create_gives_an_unambiguous_code_and_a_long_secret(store):
    codes = set()
    for _ in range(20):
        code, secret = store.create()
        assert R.CODE_RE.match(code) and not set(code) & set("IL01O")
        assert len(secret) == 32 and secret.replace("-", "").replace("_", "").isalnum()
        codes.add(code)
    assert len(codes) == 20
    view = store.view(code)
    assert view == {"status": "waiting", "question": None, "count": 0, "reveal": None, "version": view["version"]}
    assert store.view(code.lower()) == view  # typed in lower case, the same room


def test_the_public_view_holds_back_the_answer(store):
    code, secret = opened(store)
    view = store.view(code)
    assert view["status"] == "open" and view["question"] == CHOICE.public() and view["count"] == 0
    text = json.dumps(view)
    assert "secret explanation" not in text and "0.44" not in text and "answer" not in view["question"]
    assert secret not in text


def test_a_round_of_questions(store):
    code, secret = opened(store)
    v0 = store.view(code)["version"]
    assert store.answer(code, CHOICE.id, CLIENTS[0], "ball") is None
    assert store.answer(code, CHOICE.id, CLIENTS[1], "toy") is None
    assert store.answer(code, CHOICE.id, CLIENTS[2], "ball") is None
    assert store.view(code)["count"] == 3
    assert store.tally(code, secret) == {"ball": 2, "toy": 1}
    assert store.close(code, secret)
    assert store.view(code)["status"] == "closed" and store.view(code)["version"] > v0
    assert store.answer(code, CHOICE.id, CLIENTS[3], "ball") == "closed"
    payload = {
        "rows": [{"label": "ball", "count": 2, "share": 2 / 3, "model": 0.44, "answer": True}],
        "sentence": "67% of you chose ball; the model put 44% on ball.",
    }
    assert store.reveal(code, secret, payload)
    view = store.view(code)
    assert view["status"] == "revealed" and view["reveal"] == payload and view["count"] == 3
    assert store.answer(code, CHOICE.id, CLIENTS[3], "ball") == "closed"
    assert store.clear(code, secret)
    view = store.view(code)
    assert view["status"] == "waiting" and view["question"] is None and view["reveal"] is None and view["count"] == 0
    assert store.answer(code, CHOICE.id, CLIENTS[3], "ball") == "stale"
    assert store.tally(code, secret) == {}


def test_asking_again_clears_the_previous_answers(store):
    code, secret = opened(store)
    assert store.answer(code, CHOICE.id, CLIENTS[0], "ball") is None
    assert store.ask(code, secret, WORD.to_dict())
    assert store.view(code)["count"] == 0 and store.tally(code, secret) == {}
    assert store.answer(code, CHOICE.id, CLIENTS[0], "ball") == "stale"  # the old question's id
    assert store.answer(code, WORD.id, CLIENTS[0], "  BALL ") is None
    assert store.tally(code, secret) == {"ball": 1}


def test_one_answer_per_client_and_a_re_answer_replaces_it(store):
    code, secret = opened(store)
    for value in ("ball", "toy", "dog"):
        assert store.answer(code, CHOICE.id, CLIENTS[0], value) is None
    assert store.view(code)["count"] == 1 and store.tally(code, secret) == {"dog": 1}


def test_only_the_secret_steers(store):
    code, secret = opened(store)
    store.answer(code, CHOICE.id, CLIENTS[0], "ball")
    other_code, other_secret = store.create()
    for wrong in (
        "",
        "x" * 32,
        secret[:-1] + ("A" if secret[-1] != "A" else "B"),
        other_secret,
        None,
        42,
        secret.upper() if secret.upper() != secret else secret.lower(),
    ):
        assert store.ask(code, wrong, WORD.to_dict()) is False
        assert store.close(code, wrong) is False
        assert store.reveal(code, wrong, {"rows": []}) is False
        assert store.clear(code, wrong) is False
        assert store.tally(code, wrong) is None
        assert store.put(code, wrong, "slide", {"i": 1}) is False
    view = store.view(code)
    assert view["status"] == "open" and view["question"]["id"] == CHOICE.id and view["count"] == 1
    assert store.tally(other_code, other_secret) == {}  # one room's secret opens only that room


@pytest.mark.parametrize("code", ["ZZZZZZ", "", "ABC", "ABCDEFG", "abc'--", "../../x", None, 123, "A" * 10_000])
def test_unknown_rooms(store, code):
    assert store.view(code) is None
    assert store.answer(code, "q", CLIENTS[0], "ball") == "unknown"
    assert store.ask(code, "s" * 32, WORD.to_dict()) is False
    assert store.close(code, "s" * 32) is False and store.clear(code, "s" * 32) is False
    assert store.tally(code, "s" * 32) is None and store.get(code, "slide") is None


@pytest.mark.parametrize(
    "value",
    [
        None,
        3,
        3.5,
        True,
        ["ball"],
        {"v": "ball"},
        "",
        " ",
        "balls",
        "BALL",
        "ball|toy",
        "x" * 10_000,
        "<script>alert(1)</script>",
        "ball\x00",
    ],
)
def test_answers_that_are_not_a_choice_are_refused(store, value):
    code, secret = opened(store)
    assert store.answer(code, CHOICE.id, CLIENTS[0], value) == "invalid"
    assert store.view(code)["count"] == 0 and store.tally(code, secret) == {}


@pytest.mark.parametrize(
    "value",
    [
        None,
        7,
        ["ball"],
        "",
        "two words",
        "x" * (MAX_ANSWER_CHARS + 1),
        "a" * 100_000,
        "<script>",
        "</script>",
        "ball;DROP",
        "\u202eball",
        "ba\nll",
        "{{7*7}}",
        "a'b;c",
    ],
)
def test_free_words_that_are_not_a_word_are_refused(store, value):
    code, secret = opened(store, WORD)
    assert store.answer(code, WORD.id, CLIENTS[0], value) == "invalid"
    assert store.tally(code, secret) == {}


def test_words_are_kept_normalised_never_raw(store):
    code, secret = opened(store, WORD)
    sent = {
        "  Ball ": "ball",
        "ＢＡＬＬ": "ball",
        "Rock-'n'-Roll": "rock-'n'-roll",
        "x" * MAX_ANSWER_CHARS: "x" * MAX_ANSWER_CHARS,
    }
    for i, value in enumerate(sent):
        assert store.answer(code, WORD.id, CLIENTS[i], value) is None
    assert store.tally(code, secret) == {"ball": 2, "rock-'n'-roll": 1, "x" * MAX_ANSWER_CHARS: 1}


def test_an_injection_string_as_a_choice_is_counted_as_that_label_and_returned_as_json(store):
    code, secret = opened(store)
    assert store.answer(code, CHOICE.id, CLIENTS[0], "<script>") is None
    assert store.tally(code, secret) == {"<script>": 1}
    assert json.loads(json.dumps(store.view(code)))["question"]["choices"][-1] == "<script>"


def test_multi_answers_are_sorted_into_the_choices_order(store):
    code, secret = opened(store, MULTI)
    assert store.answer(code, MULTI.id, CLIENTS[0], "sat|the") is None
    assert store.answer(code, MULTI.id, CLIENTS[1], "the|sat") is None
    assert store.answer(code, MULTI.id, CLIENTS[2], "the|the") == "invalid"
    assert store.answer(code, MULTI.id, CLIENTS[3], "the|dog") == "invalid"
    assert store.tally(code, secret) == {"the|sat": 2}


@pytest.mark.parametrize(
    "client", [None, 5, "", "short", "x" * 65, "a b c d e f g h", "<script>x</script>", "client/../../x", "ü" * 10]
)
def test_client_ids_must_be_url_safe_random_ids(store, client):
    code, secret = opened(store)
    assert store.answer(code, CHOICE.id, client, "ball") == "invalid"
    assert store.tally(code, secret) == {}


@pytest.mark.parametrize("qid", [None, 7, "", "nope", "x" * 1000, ["q"]])
def test_an_answer_to_another_question_is_stale(store, qid):
    code, _ = opened(store)
    assert store.answer(code, qid, CLIENTS[0], "ball") in ("stale", "invalid")


def test_a_client_is_rate_limited(store, monkeypatch):
    code, secret = opened(store)
    for i in range(R.RATE_ANSWERS):
        assert store.answer(code, CHOICE.id, CLIENTS[0], ["ball", "toy"][i % 2]) is None
    assert store.answer(code, CHOICE.id, CLIENTS[0], "dog") == "limited"
    assert store.answer(code, CHOICE.id, CLIENTS[0], 12345) == "limited"  # garbage counts against the window too
    assert store.answer(code, CHOICE.id, CLIENTS[1], "dog") is None  # others are not
    assert store.tally(code, secret) == {"ball": 1, "dog": 1}  # the last accepted answer of each client


def test_the_rate_window_passes(store, monkeypatch):
    monkeypatch.setattr(R, "RATE_WINDOW_S", 0.3)
    code, secret = opened(store)
    for _ in range(R.RATE_ANSWERS):
        assert store.answer(code, CHOICE.id, CLIENTS[0], "ball") is None
    assert store.answer(code, CHOICE.id, CLIENTS[0], "toy") == "limited"
    time.sleep(0.45)
    assert store.answer(code, CHOICE.id, CLIENTS[0], "toy") is None
    assert store.tally(code, secret) == {"toy": 1}


def test_answers_per_question_are_bounded(store, monkeypatch):
    monkeypatch.setattr(R, "MAX_ANSWERS", 3)
    code, secret = opened(store)
    for c in CLIENTS[:3]:
        assert store.answer(code, CHOICE.id, c, "ball") is None
    assert store.answer(code, CHOICE.id, CLIENTS[3], "ball") == "limited"
    assert store.answer(code, CHOICE.id, CLIENTS[0], "toy") is None  # who already answered may still change
    assert store.tally(code, secret) == {"ball": 2, "toy": 1}


def test_rooms_are_bounded(store, monkeypatch):
    monkeypatch.setattr(R, "MAX_ROOMS", 3)
    for _ in range(3):
        store.create()
    with pytest.raises(R.RoomsFull):
        store.create()


def test_rooms_expire_when_idle(store, monkeypatch):
    monkeypatch.setattr(R, "ROOM_TTL_S", 1)
    code, secret = opened(store)
    store.put(code, secret, "slide", {"i": 3})
    assert store.answer(code, CHOICE.id, CLIENTS[0], "ball") is None
    if isinstance(store, R.InProcessRooms):
        later = time.monotonic() + 1.5
        store._clock = lambda: later
    else:
        time.sleep(2.2)
    assert store.view(code) is None and store.tally(code, secret) is None and store.get(code, "slide") is None
    assert store.answer(code, CHOICE.id, CLIENTS[1], "ball") == "unknown"
    assert store.ask(code, secret, CHOICE.to_dict()) is False
    if not isinstance(store, R.InProcessRooms):
        left = store.r.keys(f"bve:room:{code}*")  # nothing of it is left in Redis but a rate window's counter,
        assert all(":r:" in k and 0 < store.r.pttl(k) <= R.RATE_WINDOW_S * 1000 for k in left)  # itself expiring
    monkeypatch.setattr(R, "MAX_ROOMS", 1)
    store.create()  # the expired room's place counts no more


def test_use_keeps_a_room_alive(store, monkeypatch):
    monkeypatch.setattr(R, "ROOM_TTL_S", 2)
    code, _ = opened(store)
    now = [time.monotonic()]
    if isinstance(store, R.InProcessRooms):
        store._clock = lambda: now[0]
    for _ in range(3):
        if isinstance(store, R.InProcessRooms):
            now[0] += 1.2
        else:
            time.sleep(1.2)
        assert store.view(code) is not None


def test_presenter_state(store):
    code, secret = store.create()
    assert store.get(code, "slide") is None
    assert store.put(code, secret, "slide", {"deck": "default", "i": 4})
    assert store.get(code, "slide") == {"deck": "default", "i": 4}
    assert store.put(code, secret, "slide", {"deck": "default", "i": 5})
    assert store.get(code, "slide") == {"deck": "default", "i": 5}
    for bad in [
        ("bad key!", {}),
        ("", {}),
        ("k" * 33, {}),
        ("slide", "not a dict"),
        ("slide", {"x": "y" * 5000}),
        ("slide", {"x": float("nan")}),
        ("slide", {"x": object()}),
    ]:
        with pytest.raises(ValueError):
            store.put(code, secret, *bad)
    for i in range(R.MAX_STATE_KEYS - 1):
        assert store.put(code, secret, f"k{i}", {})
    assert store.put(code, secret, "one-too-many", {}) is False


def test_bad_questions_and_payloads_are_refused(store):
    code, secret = store.create()
    with pytest.raises((ValueError, KeyError, TypeError)):
        store.ask(code, secret, {"lesson": "x", "prompt": "p", "kind": "poll"})
    with pytest.raises((ValueError, KeyError, TypeError)):
        store.ask(code, secret, {"prompt": "p"})
    with pytest.raises(ValueError):
        store.ask(code, secret, Question("x", "p" * 20_000, "word").to_dict())
    assert store.close(code, secret) is False  # nothing asked: nothing to close
    assert store.reveal(code, secret, {"rows": []}) is False
    store.ask(code, secret, CHOICE.to_dict())
    for bad in ("rows", ["rows"], {"rows": ["x" * 40_000]}, {"x": float("inf")}):
        with pytest.raises(ValueError):
            store.reveal(code, secret, bad)
    assert store.view(code)["status"] == "open"


def test_concurrent_answers_are_each_counted_once(store):
    code, secret = opened(store)
    clients = [f"phone-{i:05d}" for i in range(200)]
    errors = []

    def phone(i):
        for value in ("ball", "toy"):  # an answer, then a change of mind
            try:
                err = store.answer(code, CHOICE.id, clients[i], value if i % 2 else "ball")
            except Exception as e:  # noqa: BLE001 — a store that raises under a burst ("Too many connections")
                err = repr(e)
            if err:
                errors.append(err)

    threads = [threading.Thread(target=phone, args=(i,)) for i in range(200)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert store.view(code)["count"] == 200
    assert store.tally(code, secret) == {"ball": 100, "toy": 100}


def test_rooms_picks_redis_when_configured(monkeypatch, redis_url):
    monkeypatch.setattr(R, "_ROOMS", None)
    monkeypatch.delenv("BVE_REDIS_URL", raising=False)
    assert isinstance(R.rooms(), R.InProcessRooms) and R.rooms() is R.rooms()
    monkeypatch.setattr(R, "_ROOMS", None)
    monkeypatch.setenv("BVE_REDIS_URL", redis_url)
    assert isinstance(R.rooms(), R.RedisRooms)
    monkeypatch.setattr(R, "_ROOMS", None)


def test_redis_loses_nothing_across_a_restart_of_the_app(redis_url):
    """Two RedisRooms are two app processes (or one before and after a restart): what one wrote, the other reads."""
    import redis

    redis.Redis.from_url(redis_url).flushdb()
    a, b = R.RedisRooms(redis_url), R.RedisRooms(redis_url)
    code, secret = opened(a)
    assert a.answer(code, CHOICE.id, CLIENTS[0], "ball") is None
    assert b.answer(code, CHOICE.id, CLIENTS[1], "toy") is None
    assert b.answer(code, CHOICE.id, CLIENTS[0], "dog") is None  # a re-answer through the other process replaces
    del a
    c = R.RedisRooms(redis_url)
    assert c.tally(code, secret) == {"toy": 1, "dog": 1} and c.view(code)["count"] == 2
    assert c.close(code, secret) and b.view(code)["status"] == "closed"


def test_redis_stores_no_secret_and_no_raw_answer(redis_url):
    import redis

    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    raw.flushdb()
    store = R.RedisRooms(redis_url)
    code, secret = opened(store, WORD)
    store.answer(code, WORD.id, CLIENTS[0], "  BALL  ")
    dump = json.dumps({k: raw.hgetall(k) if raw.type(k) == "hash" else None for k in raw.keys("*")})
    assert secret not in dump and "BALL" not in dump and '"ball"' in dump
