"""The HTTP side of sagebench's Ray driver: keep-alive connection pools
to the target, Q1's three calls, and the timings, headers and error
classes of sagebench's Go client (internal/openai), so a record means
the same on both backends.

One Pool per stage holds at most the stage's concurrency in kept-alive
connections (http.client, standard library only) and is warmed before
the schedule's zero with GET /v1/models on each connection, as the Go
client warms its own. A reused connection the target closed while idle
is replaced once by a fresh one, as Go's transport does, and the call's
note says so.
"""

import http.client
import json
import socket
import threading
import time
import urllib.parse

MAX_ERROR = 300
MAX_BODY = 64 << 20  # openai.DefaultMaxResponseBytes
MAX_LINE = 1 << 20  # openai.DefaultMaxLine
MAX_SNIPPET = 4 << 10
MAX_HEADER = 256  # protocol: a server timing header longer than this is ignored
MAX_US = 24 * 3600 * 10**6  # protocol.MaxDeadline in µs
TOKEN_MARGIN = 64  # openai.tokenTimesMargin
NOTE_RESENT = "sent 2 times: the target closed a kept-alive connection before answering"
NOTE_NO_DONE = "stream ended after finish_reason without [DONE]"  # openai.NoteNoDone


def now():
    return time.time_ns()


class CallFailed(Exception):
    """A failed call with sagebench's error class and HTTP status."""

    def __init__(self, cls, status, msg):
        super().__init__(msg)
        self.cls, self.status = cls, status


def classify(exc):
    """Maps an exception to sagebench's error class and HTTP status."""
    if isinstance(exc, CallFailed):
        return exc.cls, exc.status
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timeout", 0
    if isinstance(exc, http.client.IncompleteRead):
        return "truncated", 0
    if isinstance(exc, http.client.LineTooLong):
        return "too_large", 0
    if isinstance(exc, (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected)):
        return "reset", 0
    if isinstance(exc, (OSError, http.client.HTTPException)):
        return "connect", 0
    if isinstance(exc, ValueError):
        return "malformed", 0
    return "stream_error", 0


def status_class(code):
    """openai.statusClass: 429, other 3xx/4xx (redirects are not followed), else 5xx."""
    if code == 429:
        return "http_429"
    if 300 <= code < 500:
        return "http_4xx"
    return "http_5xx"


class Response(http.client.HTTPResponse):
    """Keeps a chunked body's trailers (http.client discards them): a
    streamed answer's X-Sagebench-Server-Timing comes as one. On a
    Python whose http.client no longer calls this hook, trailers are not
    read and the server timing of streams is simply absent."""

    trailers = None

    def _read_and_discard_trailer(self):
        self.trailers = {}
        for _ in range(64):
            line = self.fp.readline(http.client._MAXLINE + 1)
            if len(line) > http.client._MAXLINE:
                raise http.client.LineTooLong("trailer line")
            if line in (b"\r\n", b"\n", b""):
                return
            name, sep, value = line.decode("latin-1").partition(":")
            if sep:
                self.trailers[name.strip().lower()] = value.strip()


class Pool:
    """Kept-alive connections to the target for one stage: at most size
    (the stage's concurrency) are kept; dials and reuses are counted."""

    def __init__(self, target, size, timeout):
        u = urllib.parse.urlsplit(target)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("target %r: want an http(s) URL" % target)
        self.https, self.host, self.port = u.scheme == "https", u.hostname, u.port
        self.prefix = u.path.rstrip("/")
        self.size, self.timeout = max(int(size), 1), timeout
        self.idle, self.lock, self.closed = [], threading.Lock(), False
        self.dials = self.reuses = 0

    def dial(self):
        cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
        conn = cls(self.host, self.port, timeout=self.timeout)
        conn.response_class = Response
        try:
            conn.connect()
        except (OSError, http.client.HTTPException) as exc:  # refused, unreachable, DNS, connect timeout, TLS
            conn.close()
            raise CallFailed("connect", 0, "connecting to the target: %s" % exc)
        with self.lock:
            self.dials += 1
        return conn

    def get(self):
        """An idle connection (reused True) or a newly dialed one."""
        with self.lock:
            if self.idle:
                self.reuses += 1
                return self.idle.pop(), True
        return self.dial(), False

    def put(self, conn):
        """Keeps conn for the next call unless it is closed or the pool is full."""
        if conn.sock is None:
            return
        with self.lock:
            if len(self.idle) < self.size and not self.closed:
                self.idle.append(conn)
                return
        conn.close()

    def warm(self, n, headers, timeout):
        """Opens up to n connections at once, each asking GET /v1/models,
        and keeps them; returns how many answered 2xx."""
        n = min(int(n), self.size)
        ok = []
        gate = threading.Barrier(n, timeout=timeout) if n > 0 else None

        def one():
            conn = None
            try:
                conn = self.dial()
                conn.request("GET", self.prefix + "/v1/models", headers=headers)
                resp = conn.getresponse()
                resp.read(MAX_BODY)
                if resp.status // 100 == 2:
                    ok.append(1)
            except Exception:  # a refused warm-up is no error here; the run's calls say it
                if conn is not None:
                    conn.close()
                conn = None
            try:
                gate.wait()  # each its own connection: none is put back before all are open
            except threading.BrokenBarrierError:
                pass
            if conn is not None:
                self.put(conn)

        threads = [threading.Thread(target=one, daemon=True) for _ in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout)
        return len(ok)

    def close(self):
        """Closes the idle connections, and every one returned from now on."""
        with self.lock:
            idle, self.idle, self.closed = self.idle, [], True
        for conn in idle:
            conn.close()


def exchange(pool, path, body, headers, c):
    """POSTs body (JSON) on a kept-alive connection and returns
    (connection, response) with c's send time and response headers set.
    A non-2xx answer raises CallFailed with its class and a snippet."""
    data = json.dumps(body).encode()
    for attempt in (1, 2):
        conn, reused = pool.get()
        c["sent"] = now()
        try:
            conn.request("POST", pool.prefix + path, body=data, headers=headers)
            resp = conn.getresponse()
            break
        except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected) as exc:
            conn.close()
            if not reused or attempt == 2:
                raise CallFailed("reset", 0, "POST %s: %s" % (path, exc))
            c["note"] = NOTE_RESENT
        except BaseException:
            conn.close()
            raise
    c["first_byte"] = now()
    read_headers(resp, c)
    if resp.status // 100 != 2:
        snippet = resp.read(MAX_SNIPPET)
        finish(pool, conn, resp)
        text = snippet.decode("utf-8", "replace").strip()[:200]
        raise CallFailed(status_class(resp.status), resp.status, "HTTP %d: %s" % (resp.status, text) if text else "HTTP %d" % resp.status)
    return conn, resp


def finish(pool, conn, resp):
    """Returns conn to the pool when its response was read to the end."""
    if resp.isclosed() and not resp.will_close:
        pool.put(conn)
    else:
        conn.close()


def read_headers(resp, c):
    c["status"] = resp.status
    c["engine"] = (resp.getheader("X-Engine-Id") or "")[:200]
    retries = parse_int(resp.getheader("X-Sagebench-Retries"), 1000)
    if retries is not None:
        c["retries"] = retries
    queue = parse_int(resp.getheader("X-Sagebench-Queue-Us"), MAX_US)
    if queue is not None:
        c["queue_ms"] = queue / 1000
    server_timing(resp.getheader("X-Sagebench-Server-Timing"), c)


def parse_int(v, limit):
    """A whole number in [0, limit], or None."""
    if v is None or not v.strip().isdigit():
        return None
    n = int(v.strip())
    return n if n <= limit else None


def server_timing(v, c):
    """protocol.ParseServerTiming: "ttft_us=N;e2e_us=N", each in
    [0, 24 h]; anything malformed (or longer than 256 bytes) is ignored
    whole."""
    if not v or len(v) > MAX_HEADER:
        return
    got = {}
    for part in v.split(";"):
        k, sep, val = part.strip().partition("=")
        n = parse_int(val, MAX_US) if sep else None
        if n is None:
            return
        got[k] = n
    c["server_ttft_ms"] = got.get("ttft_us", 0) / 1000
    c["server_e2e_ms"] = got.get("e2e_us", 0) / 1000


def read_json(pool, conn, resp):
    """The whole JSON body (at most MAX_BODY bytes)."""
    raw = resp.read(MAX_BODY + 1)
    if len(raw) > MAX_BODY:
        conn.close()
        raise CallFailed("too_large", resp.status, "response body exceeds %d bytes" % MAX_BODY)
    finish(pool, conn, resp)
    return json.loads(raw)


def read_stream(pool, conn, resp, c, max_tokens):
    """Reads an SSE chat stream as the Go client does: a timestamp per
    non-empty delta (answer or reasoning; at most max_tokens + 25 % + 64
    kept, the last slot holding the latest), the first answer token,
    usage; ends at [DONE], or cleanly after a finish_reason (noted)."""
    cap = max_tokens + max_tokens // 4 + TOKEN_MARGIN
    finished = False
    while True:
        raw = resp.readline(MAX_LINE + 1)
        if not raw:
            break
        if len(raw) > MAX_LINE:
            conn.close()
            raise CallFailed("too_large", c["status"], "stream line longer than %d bytes" % MAX_LINE)
        line = raw.decode("utf-8", "replace").strip()
        if line.startswith("event:") and line[6:].strip() == "error":
            conn.close()
            raise CallFailed("stream_error", c["status"], "error event in stream")
        if not line.startswith("data:"):
            continue
        data = line[5:].strip()
        if data == "[DONE]":
            c["end"] = now()
            resp.read(MAX_SNIPPET)  # the chunked body's end (and trailers)
            trailer(resp, c)
            finish(pool, conn, resp)
            return
        finished = chunk(data, c, cap) or finished
    conn.close()
    if finished:
        c["end"] = now()
        c["note"] = NOTE_NO_DONE if not c.get("note") else c["note"] + "; " + NOTE_NO_DONE
        trailer(resp, c)
        return
    raise CallFailed("truncated", c["status"], "stream ended without [DONE] or a finish_reason after %d tokens" % c["token_count"])


def trailer(resp, c):
    if resp.trailers:
        server_timing(resp.trailers.get("x-sagebench-server-timing"), c)


def chunk(data, c, cap):
    """Applies one chat.completion.chunk; returns whether a choice finished."""
    try:
        ch = json.loads(data)
    except ValueError as exc:
        raise CallFailed("malformed", c["status"], "decoding stream chunk %d: %s" % (c["token_count"], exc))
    if not isinstance(ch, dict):
        raise CallFailed("malformed", c["status"], "stream chunk %d is not an object" % c["token_count"])
    if ch.get("error") is not None:
        raise CallFailed("stream_error", c["status"], "target reported an error in the stream: %s" % str(ch["error"])[:200])
    finished = False
    for choice in ch.get("choices") or []:
        delta = choice.get("delta") or {}
        finished = finished or bool(choice.get("finish_reason"))
        if delta.get("reasoning_content") or delta.get("reasoning"):
            token(c, now(), False, cap)
        if delta.get("content"):
            token(c, now(), True, cap)
    usage = ch.get("usage") or {}
    if usage:
        c["prompt_tokens"] = usage.get("prompt_tokens", c["prompt_tokens"]) or 0
        c["completion_tokens"] = usage.get("completion_tokens", c["completion_tokens"]) or 0
    return finished


def token(c, t, answer, cap):
    c["first_token"] = c["first_token"] or t
    if answer:
        c["first_answer_token"] = c["first_answer_token"] or t
    c["token_count"] += 1
    if len(c["tokens"]) < cap:
        c["tokens"].append(t)
    else:
        c["tokens"][-1] = t
        c["tokens_dropped"] += 1
