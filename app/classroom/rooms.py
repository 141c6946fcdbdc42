"""The one room-state interface (:class:`Rooms`) and its two backends. Pure Python: no streamlit, no torch.

A room is made by :meth:`Rooms.create`, which returns its *code* (what students type or scan) and its *secret*
(what only the presenter holds). Everything a presenter does takes the secret; a student's phone only reads
:meth:`Rooms.view` and posts :meth:`Rooms.answer`.

- :class:`InProcessRooms` (the default): a dict under a lock, for one app process.
- :class:`RedisRooms` (``BVE_REDIS_URL`` set): several app processes share rooms; every change is one Lua script,
  so two processes never double count, and a restart loses nothing.

:func:`rooms` returns the process-wide instance. Limits (all enforced by both backends, tested by the same tests):
rooms expire :data:`ROOM_TTL_S` after their last use; at most :data:`MAX_ROOMS` rooms and :data:`MAX_ANSWERS`
answering clients per question; a client answers at most :data:`RATE_ANSWERS` times per :data:`RATE_WINDOW_S`;
answers are normalised by :func:`app.classroom.question.normalise` (length-capped there) and only the normalised
answer is kept.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Protocol

from app.classroom.question import MAX_ANSWER_CHARS, Question, normalise

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"  # no I, L, O, 0, 1: read aloud or off a projector, unambiguous
CODE_LENGTH = 6
CODE_RE = re.compile(rf"^[{CODE_ALPHABET}]{{{CODE_LENGTH}}}$")
CLIENT_RE = re.compile(r"^[A-Za-z0-9_-]{8,64}$")  # the phone's random id (url-safe), kept in its localStorage
KEY_RE = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")

ROOM_TTL_S = 4 * 3600  # a room nobody used for this long is gone
MAX_ROOMS = 500
MAX_ANSWERS = 1000  # answering clients per question
RATE_ANSWERS, RATE_WINDOW_S = 5, 10.0  # per client
MAX_QUESTION_BYTES = 16_384  # a question's JSON (prompt, up to MAX_CHOICES labels, the held-back answer)
MAX_REVEAL_BYTES = 32_768  # the reveal payload's JSON
MAX_STATE_BYTES, MAX_STATE_KEYS = 4096, 16  # put/get: small presenter state
STATUSES = ("waiting", "open", "closed", "revealed")
ERRORS = ("closed", "stale", "invalid", "limited", "unknown")


class RoomsFull(RuntimeError):
    """Raised by :meth:`Rooms.create` when :data:`MAX_ROOMS` rooms are in use."""


class Rooms(Protocol):
    """What the presenter's UI and the student routes call. Presenter calls take the secret and return False / None
    for a wrong secret or an unknown (or expired) room; they raise ValueError only for a malformed argument (a
    question :class:`Question` refuses, a payload that is not a small JSON object): a programming error."""

    def create(self) -> tuple[str, str]:
        """A new room: (code, secret). Raises :class:`RoomsFull` when MAX_ROOMS rooms are in use."""

    def ask(self, code: str, secret: str, question: dict) -> bool:
        """Open ``question`` (``Question.to_dict()``): status "open", the previous question's answers and reveal
        cleared, the version bumped."""

    def close(self, code: str, secret: str) -> bool:
        """No more answers (status "closed"). False when no question was asked."""

    def reveal(self, code: str, secret: str, payload: dict) -> bool:
        """Close and publish ``payload`` to the phones (status "revealed"; see app/classroom/routes.py for the
        fields the page draws). False when no question was asked."""

    def clear(self, code: str, secret: str) -> bool:
        """Next question / next slide: no question open (status "waiting"), answers and reveal dropped."""

    def view(self, code: str) -> dict | None:
        """Public: {"status", "question": Question.public() or None, "count", "reveal", "version"}; None for an
        unknown room. The version changes with every ask / close / reveal / clear, not with answers."""

    def answer(self, code: str, qid: str, client: str, value: object) -> str | None:
        """A phone's answer: None when counted (a re-answer replaces the client's earlier one), else "unknown"
        (room), "invalid" (client id or value), "stale" (not the open question), "closed", or "limited" (rate,
        or MAX_ANSWERS reached)."""

    def tally(self, code: str, secret: str) -> dict[str, int] | None:
        """Presenter only: normalised answer -> how many clients gave it, for the current question."""

    def put(self, code: str, secret: str, key: str, value: dict) -> bool:
        """Small presenter state (a JSON object ≤ MAX_STATE_BYTES, ≤ MAX_STATE_KEYS keys), e.g. the slide."""

    def get(self, code: str, key: str) -> dict | None:
        """What :meth:`put` stored under ``key``, or None."""


def _digest(secret: object) -> str:
    return hashlib.sha256(secret.encode()).hexdigest() if isinstance(secret, str) else ""


def _code(code: object) -> str | None:
    """The room code as stored (upper-case), or None when it cannot be one."""
    if not isinstance(code, str):
        return None
    code = code.strip().upper()
    return code if CODE_RE.match(code) else None


def _new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def _new_secret() -> str:
    return secrets.token_urlsafe(24)  # 32 url-safe characters


def checked_question(question: dict) -> dict:
    """The question as stored: validated through :class:`Question` (ValueError or KeyError otherwise), with its id."""
    text = json.dumps(Question.from_dict(question).to_dict(), ensure_ascii=False, allow_nan=False)
    if len(text.encode()) > MAX_QUESTION_BYTES:
        raise ValueError("question too large")
    return json.loads(text)  # plain JSON values (lists, not tuples): the same from both backends


def _public(q: dict | None) -> dict | None:
    return None if q is None else {k: q[k] for k in ("id", "lesson", "prompt", "kind", "choices")}


def _small_json(value: object, limit: int) -> str | None:
    """``value`` as JSON when it is a dict of JSON values within ``limit`` bytes, else None."""
    if not isinstance(value, dict):
        return None
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return text if len(text.encode()) <= limit else None


def _valid_answer(question: dict | None, value: object) -> str | None:
    if question is None or not isinstance(value, str) or len(value) > MAX_ANSWER_CHARS * 8:
        return None
    return normalise(question, value)


# ----------------------------------------------------------------------------------------------- in process


@dataclass
class _Room:
    secret: str  # its sha256
    used: float
    status: str = "waiting"
    question: dict | None = None
    answers: dict[str, str] = field(default_factory=dict)  # client -> normalised answer, current question only
    reveal: dict | None = None
    version: int = 1
    rate: dict[str, deque] = field(default_factory=dict)  # client -> times of its recent answers
    rate_swept: float = float("-inf")
    state: dict[str, str] = field(default_factory=dict)  # put/get, as JSON text


class InProcessRooms:
    """Rooms in this process's memory, under one lock (Streamlit serves pages and routes from several threads)."""

    blocking = False  # every call returns at once: the routes call it on the event loop

    def __init__(self, clock=time.monotonic) -> None:
        self._rooms: dict[str, _Room] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def _purge(self, now: float) -> None:
        for code in [c for c, r in self._rooms.items() if now - r.used > ROOM_TTL_S]:
            del self._rooms[code]

    def _room(self, code: object, secret: object = None, *, presenter: bool = False) -> _Room | None:
        """The live room (touched), or None: unknown, expired, or (presenter) the wrong secret. Lock held."""
        code = _code(code)
        room = self._rooms.get(code) if code else None
        now = self._clock()
        if room is None:
            return None
        if now - room.used > ROOM_TTL_S:
            del self._rooms[code]
            return None
        if presenter and not hmac.compare_digest(room.secret, _digest(secret)):
            return None
        room.used = now
        return room

    def create(self) -> tuple[str, str]:
        secret = _new_secret()
        with self._lock:
            now = self._clock()
            if len(self._rooms) >= MAX_ROOMS:
                self._purge(now)
            if len(self._rooms) >= MAX_ROOMS:
                raise RoomsFull(f"{MAX_ROOMS} rooms in use")
            code = _new_code()
            while code in self._rooms:
                code = _new_code()
            self._rooms[code] = _Room(secret=_digest(secret), used=now)
        return code, secret

    def ask(self, code: str, secret: str, question: dict) -> bool:
        q = checked_question(question)
        with self._lock:
            room = self._room(code, secret, presenter=True)
            if room is None:
                return False
            room.status, room.question, room.answers, room.reveal = "open", q, {}, None
            room.version += 1
            return True

    def _set(self, code: str, secret: str, status: str, reveal: dict | None = None) -> bool:
        with self._lock:
            room = self._room(code, secret, presenter=True)
            if room is None:
                return False
            if status == "waiting":
                room.question, room.answers, room.reveal = None, {}, None
            elif room.question is None:  # nothing asked: nothing to close or reveal
                return False
            if status == "revealed":
                room.reveal = reveal
            room.status = status
            room.version += 1
            return True

    def close(self, code: str, secret: str) -> bool:
        return self._set(code, secret, "closed")

    def reveal(self, code: str, secret: str, payload: dict) -> bool:
        text = _small_json(payload, MAX_REVEAL_BYTES)
        if text is None:
            raise ValueError("the reveal payload must be a JSON object within MAX_REVEAL_BYTES")
        return self._set(code, secret, "revealed", json.loads(text))

    def clear(self, code: str, secret: str) -> bool:
        return self._set(code, secret, "waiting")

    def view(self, code: str) -> dict | None:
        with self._lock:
            room = self._room(code)
            if room is None:
                return None
            return {
                "status": room.status,
                "question": _public(room.question),
                "count": len(room.answers),
                "reveal": json.loads(json.dumps(room.reveal)) if room.reveal is not None else None,
                "version": room.version,
            }

    def answer(self, code: str, qid: str, client: str, value: object) -> str | None:
        with self._lock:
            room = self._room(code)
            if room is None:
                return "unknown"
            if not isinstance(client, str) or not CLIENT_RE.match(client) or not isinstance(qid, str):
                return "invalid"
            if room.question is None or qid != room.question["id"]:
                return "stale"
            if room.status != "open":
                return "closed"
            now = self._clock()
            times = room.rate.get(client)
            if times is None:
                if len(room.rate) >= 4 * MAX_ANSWERS:  # keep the table bounded: drop clients quiet for a window
                    if now - room.rate_swept > 1.0:  # (at most once a second: a flood of new ids costs no scans)
                        room.rate_swept = now
                        for c in [c for c, t in room.rate.items() if not t or now - t[-1] > RATE_WINDOW_S]:
                            del room.rate[c]
                    if len(room.rate) >= 4 * MAX_ANSWERS:
                        return "limited"
                times = room.rate[client] = deque()
            while times and now - times[0] > RATE_WINDOW_S:
                times.popleft()
            if len(times) >= RATE_ANSWERS:
                return "limited"
            times.append(now)
            word = _valid_answer(room.question, value)
            if word is None:
                return "invalid"
            if client not in room.answers and len(room.answers) >= MAX_ANSWERS:
                return "limited"
            room.answers[client] = word
            return None

    def tally(self, code: str, secret: str) -> dict[str, int] | None:
        with self._lock:
            room = self._room(code, secret, presenter=True)
            return None if room is None else dict(Counter(room.answers.values()))

    def put(self, code: str, secret: str, key: str, value: dict) -> bool:
        text = _small_json(value, MAX_STATE_BYTES)
        if text is None or not isinstance(key, str) or not KEY_RE.match(key):
            raise ValueError("put takes a key of 1-32 url-safe characters and a small JSON object")
        with self._lock:
            room = self._room(code, secret, presenter=True)
            if room is None or (key not in room.state and len(room.state) >= MAX_STATE_KEYS):
                return False
            room.state[key] = text
            return True

    def get(self, code: str, key: str) -> dict | None:
        with self._lock:
            room = self._room(code)
            text = room.state.get(key) if room is not None and isinstance(key, str) else None
            return None if text is None else json.loads(text)


# ----------------------------------------------------------------------------------------------- Redis

# Keys, for a room CODE: bve:room:CODE (hash: secret digest, status, question JSON, qid, reveal JSON, version),
# bve:room:CODE:a (hash: client -> normalised answer, the open question's only), bve:room:CODE:r:CLIENT (the
# client's answer count in its current rate window), bve:room:CODE:s (hash: put/get state), bve:rooms (sorted set:
# code -> last use, to bound the number of rooms). Every key of a room expires ROOM_TTL_S after its last use.

_TOUCH = """
local function touch(room, ttl, now)
  redis.call('EXPIRE', room, ttl)
  redis.call('EXPIRE', room .. ':a', ttl)
  redis.call('EXPIRE', room .. ':s', ttl)
  redis.call('ZADD', KEYS[#KEYS], now, string.sub(room, 10))
end
"""

# KEYS: room, rooms.  ARGV: secret digest, ttl, now, max rooms
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[3]) - tonumber(ARGV[2]))
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return -1 end
redis.call('HSET', KEYS[1], 'secret', ARGV[1], 'status', 'waiting', 'version', 1)
redis.call('EXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], string.sub(KEYS[1], 10))
return 1
"""

# KEYS: room, rooms.  ARGV: secret digest, ttl, now, status, question JSON or '', qid or '', reveal JSON or ''
_SET = (
    _TOUCH
    + """
local secret = redis.call('HGET', KEYS[1], 'secret')
if not secret or secret ~= ARGV[1] then return 0 end
local status = ARGV[4]
if status == 'open' then
  redis.call('DEL', KEYS[1] .. ':a')
  redis.call('HSET', KEYS[1], 'question', ARGV[5], 'qid', ARGV[6])
  redis.call('HDEL', KEYS[1], 'reveal')
elseif status == 'waiting' then
  redis.call('DEL', KEYS[1] .. ':a')
  redis.call('HDEL', KEYS[1], 'question', 'qid', 'reveal')
else
  if redis.call('HEXISTS', KEYS[1], 'qid') == 0 then return 0 end
  if status == 'revealed' then redis.call('HSET', KEYS[1], 'reveal', ARGV[7]) end
end
redis.call('HSET', KEYS[1], 'status', status)
redis.call('HINCRBY', KEYS[1], 'version', 1)
touch(KEYS[1], ARGV[2], ARGV[3])
return 1
"""
)

# KEYS: room, rooms.  ARGV: ttl, now.  Returns nil or {status, question, reveal, version, count}
_VIEW = (
    _TOUCH
    + """
local v = redis.call('HMGET', KEYS[1], 'status', 'question', 'reveal', 'version')
if not v[1] then return nil end
touch(KEYS[1], ARGV[1], ARGV[2])
return {v[1], v[2] or '', v[3] or '', v[4], redis.call('HLEN', KEYS[1] .. ':a')}
"""
)

# KEYS: room, rooms.  ARGV: ttl, now, qid, client, normalised answer or '', max answers, rate answers, rate window
_ANSWER = (
    _TOUCH
    + """
local v = redis.call('HMGET', KEYS[1], 'status', 'qid')
if not v[1] then return 'unknown' end
if not v[2] or v[2] ~= ARGV[3] then return 'stale' end
if v[1] ~= 'open' then return 'closed' end
touch(KEYS[1], ARGV[1], ARGV[2])
local rate = KEYS[1] .. ':r:' .. ARGV[4]
local n = redis.call('INCR', rate)
if n == 1 then redis.call('PEXPIRE', rate, ARGV[8]) end
if n > tonumber(ARGV[7]) then return 'limited' end
if ARGV[5] == '' then return 'invalid' end
local answers = KEYS[1] .. ':a'
if redis.call('HEXISTS', answers, ARGV[4]) == 0 and redis.call('HLEN', answers) >= tonumber(ARGV[6]) then
  return 'limited'
end
redis.call('HSET', answers, ARGV[4], ARGV[5])
redis.call('EXPIRE', answers, ARGV[1])
return false
"""
)

# KEYS: room, rooms.  ARGV: secret digest, ttl, now, key, value JSON, max keys
_PUT = (
    _TOUCH
    + """
local secret = redis.call('HGET', KEYS[1], 'secret')
if not secret or secret ~= ARGV[1] then return 0 end
local state = KEYS[1] .. ':s'
if redis.call('HEXISTS', state, ARGV[4]) == 0 and redis.call('HLEN', state) >= tonumber(ARGV[6]) then return 0 end
redis.call('HSET', state, ARGV[4], ARGV[5])
touch(KEYS[1], ARGV[2], ARGV[3])
return 1
"""
)

# KEYS: room, rooms.  ARGV: secret digest, ttl, now.  Returns nil or the answers hash (flat)
_TALLY = (
    _TOUCH
    + """
local secret = redis.call('HGET', KEYS[1], 'secret')
if not secret or secret ~= ARGV[1] then return nil end
touch(KEYS[1], ARGV[2], ARGV[3])
return redis.call('HVALS', KEYS[1] .. ':a')
"""
)


REDIS_CONNECTIONS = 32  # per app process: more than Streamlit's worker threads ask for at once


class RedisRooms:
    """Rooms in Redis: several app processes (behind a load balancer with session affinity) share them, and a
    restart loses nothing. Every change is one Lua script (atomic: two processes never double count)."""

    blocking = True  # every call is a network round trip: the routes call it from a worker thread

    PREFIX = "bve:room:"  # 9 characters: the Lua scripts cut it off with string.sub(key, 10)
    INDEX = "bve:rooms"

    def __init__(self, url: str | None = None, client=None) -> None:
        if client is None:
            import redis  # only when BVE_REDIS_URL is set: the default needs nothing installed

            # a blocking pool: a burst of phones (200 answers at once) waits for one of its connections instead of
            # failing with "Too many connections" (redis-py's default pool refuses past its limit)
            pool = redis.BlockingConnectionPool.from_url(
                url or os.environ["BVE_REDIS_URL"],
                max_connections=REDIS_CONNECTIONS,
                timeout=10,
                decode_responses=True,
                socket_timeout=5,
                socket_connect_timeout=5,
                health_check_interval=30,
            )
            client = redis.Redis(connection_pool=pool)
        self.r = client
        self._create, self._setter, self._view = (client.register_script(s) for s in (_CREATE, _SET, _VIEW))
        self._answer, self._put, self._tally = (client.register_script(s) for s in (_ANSWER, _PUT, _TALLY))
        self._questions: dict[tuple[str, str], dict] = {}  # (code, qid) -> public question: a qid names its content

    def _keys(self, code: str) -> list[str]:
        return [self.PREFIX + code, self.INDEX]

    @staticmethod
    def _now() -> float:
        return time.time()

    def create(self) -> tuple[str, str]:
        secret = _new_secret()
        for _ in range(20):
            code = _new_code()
            made = self._create(keys=self._keys(code), args=[_digest(secret), ROOM_TTL_S, self._now(), MAX_ROOMS])
            if made == 1:
                return code, secret
            if made == -1:
                raise RoomsFull(f"{MAX_ROOMS} rooms in use")
        raise RuntimeError("no free room code")

    def _set(self, code: str, secret: str, status: str, question: dict | None = None, reveal: str = "") -> bool:
        code = _code(code)
        if code is None or not isinstance(secret, str):
            return False
        q = json.dumps(question, ensure_ascii=False) if question else ""
        return (
            self._setter(
                keys=self._keys(code),
                args=[_digest(secret), ROOM_TTL_S, self._now(), status, q, question["id"] if question else "", reveal],
            )
            == 1
        )

    def ask(self, code: str, secret: str, question: dict) -> bool:
        return self._set(code, secret, "open", checked_question(question))

    def close(self, code: str, secret: str) -> bool:
        return self._set(code, secret, "closed")

    def reveal(self, code: str, secret: str, payload: dict) -> bool:
        text = _small_json(payload, MAX_REVEAL_BYTES)
        if text is None:
            raise ValueError("the reveal payload must be a JSON object within MAX_REVEAL_BYTES")
        return self._set(code, secret, "revealed", reveal=text)

    def clear(self, code: str, secret: str) -> bool:
        return self._set(code, secret, "waiting")

    def view(self, code: str) -> dict | None:
        code = _code(code)
        got = self._view(keys=self._keys(code), args=[ROOM_TTL_S, self._now()]) if code else None
        if not got:
            return None
        status, question, reveal, version, count = got
        q = json.loads(question) if question else None
        if q is not None and (code, q["id"]) not in self._questions:
            self._remember(code, q)
        return {
            "status": status,
            "question": _public(q),
            "count": int(count),
            "reveal": json.loads(reveal) if reveal else None,
            "version": int(version),
        }

    def _question(self, code: str, qid: str) -> dict | None:
        """The public question ``qid`` of room ``code`` (cached: a qid is a hash of the question's content)."""
        q = self._questions.get((code, qid))
        if q is None:
            text = self.r.hget(self.PREFIX + code, "question")
            q = json.loads(text) if text else None
            if q is None or q["id"] != qid:
                return None
            q = self._remember(code, q)
        return q

    def _remember(self, code: str, question: dict) -> dict:
        if len(self._questions) > 4 * MAX_ROOMS:  # bounded: a question is asked again at most once per room
            self._questions.clear()
        q = self._questions[(code, question["id"])] = _public(question)
        return q

    def answer(self, code: str, qid: str, client: str, value: object) -> str | None:
        code = _code(code)
        if code is None:
            return "unknown"
        if not isinstance(client, str) or not CLIENT_RE.match(client) or not isinstance(qid, str) or len(qid) > 64:
            return "invalid"
        word = _valid_answer(self._question(code, qid), value) or ""  # '' for a stale qid too: the script says which
        return self._answer(
            keys=self._keys(code),
            args=[ROOM_TTL_S, self._now(), qid, client, word, MAX_ANSWERS, RATE_ANSWERS, int(RATE_WINDOW_S * 1000)],
        )

    def tally(self, code: str, secret: str) -> dict[str, int] | None:
        code = _code(code)
        if code is None or not isinstance(secret, str):
            return None
        got = self._tally(keys=self._keys(code), args=[_digest(secret), ROOM_TTL_S, self._now()])
        return None if got is None else dict(Counter(got))

    def put(self, code: str, secret: str, key: str, value: dict) -> bool:
        text = _small_json(value, MAX_STATE_BYTES)
        if text is None or not isinstance(key, str) or not KEY_RE.match(key):
            raise ValueError("put takes a key of 1-32 url-safe characters and a small JSON object")
        code = _code(code)
        if code is None or not isinstance(secret, str):
            return False
        return (
            self._put(keys=self._keys(code), args=[_digest(secret), ROOM_TTL_S, self._now(), key, text, MAX_STATE_KEYS])
            == 1
        )

    def get(self, code: str, key: str) -> dict | None:
        code = _code(code)
        if code is None or not isinstance(key, str) or not self.r.exists(self.PREFIX + code):
            return None
        text = self.r.hget(self.PREFIX + code + ":s", key)
        return None if text is None else json.loads(text)


# ----------------------------------------------------------------------------------------------- the process's own

_ROOMS: Rooms | None = None
_ROOMS_LOCK = threading.Lock()


def rooms() -> Rooms:
    """The process-wide rooms: :class:`RedisRooms` when ``BVE_REDIS_URL`` is set, else :class:`InProcessRooms`."""
    global _ROOMS
    if _ROOMS is None:
        with _ROOMS_LOCK:
            if _ROOMS is None:
                url = os.environ.get("BVE_REDIS_URL", "").strip()
                _ROOMS = RedisRooms(url) if url else InProcessRooms()
    return _ROOMS
