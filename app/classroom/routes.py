"""The student's side of a room: one light page and two JSON endpoints, served beside Streamlit on the same port
(a Space exposes one port; :mod:`app.classroom.mount` puts them there). Imports no torch and nothing heavy: a phone
on a hall's wifi downloads one small HTML document (inline CSS and JS, a few KB gzipped) and polls a few hundred
bytes of JSON.

- ``GET  /class``               — a box to type a room code (for whoever cannot scan the QR code);
- ``GET  /class/{code}``        — the answer page of one room (404 for a room that does not exist); both also with
  a trailing slash (else Streamlit's catch-all would answer with its own front end);
- ``GET  /class/{code}/state``  — :meth:`Rooms.view` as JSON; ``?v=VERSION`` with the version the phone has gives
  only ``{"status", "count", "version"}`` while nothing else changed;
- ``POST /class/{code}/answer`` — ``{"qid", "client", "value"}`` (at most :data:`MAX_BODY` bytes, checked before
  parsing) → ``{"ok": true}`` or ``{"ok": false, "error": word}`` (404 unknown, 409 stale / closed, 422 invalid,
  429 limited, 413 too large, 415 not JSON, 503 unavailable: the rooms' store did not answer).

The phone polls every 1.5 s while a question is open or closed, every 2.5 s otherwise (±20 %, backing off to 8 s on
errors, 4× slower in a background tab). A value of a ``multi`` question is the chosen labels joined by ``|``.

**The reveal payload** (:meth:`Rooms.reveal`, drawn by the phone; a JSON object of at most
``rooms.MAX_REVEAL_BYTES``)::

    {"sentence": "61% of you chose ball; the model put 44% on ball, 30% on toy.",   # optional, shown as text
     "rows": [                                                                        # optional, first 30 drawn
        {"label": "ball",   # the answer as counted (str)
         "count": 122,      # the class's answers (int)
         "share": 0.61,     # optional: of all answers, 0..1 (else count / the rows' total)
         "model": 0.44,     # optional: the model's probability, 0..1 (a second, orange bar)
         "answer": True},   # optional: the model's / the right answer (a ✓ before the label)
        ...]}

Every string of it reaches the page as text; a row whose label equals the phone's own answer is in bold.

Nothing here can open, close or reveal a question: those take the room's secret, which only the presenter's
Streamlit session holds. Every server string reaches the page's DOM through ``textContent``; JSON is served as
``application/json`` with ``<``, ``>`` and ``&`` escaped, and the page carries a Content-Security-Policy that allows
only its own inline script and style (by hash) and requests to its own origin.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import logging

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from app.classroom import rooms as _rooms

_LOG = logging.getLogger(__name__)
MAX_BODY = 2048
ROUTE_NAME = "bve-class"  # every route here is named bve-class…: mount.attach finds them by it

_CSS = """
*{box-sizing:border-box}body{margin:0;font:18px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;
background:#fafafa;color:#1a1a1a}main{max-width:560px;margin:0 auto;padding:16px}
h1{font-size:15px;font-weight:600;color:#666;margin:0 0 12px;letter-spacing:.05em}
#prompt{font-size:22px;font-weight:600;margin:0 0 16px;overflow-wrap:anywhere}
#msg{color:#555;min-height:1.4em;margin:12px 0}.err{color:#b00020!important}
button,input{font:inherit;width:100%;min-height:56px;border-radius:12px;border:2px solid #c8c8c8;
background:#fff;color:inherit;padding:10px 14px;margin:0 0 10px;text-align:left;overflow-wrap:anywhere}
button.on{border-color:#1d4ed8;background:#e8efff;font-weight:600}button.send{background:#1d4ed8;color:#fff;
border-color:#1d4ed8;text-align:center;font-weight:600}button:disabled{opacity:.55}
.row{margin:0 0 10px}.lab{display:flex;justify-content:space-between;gap:8px;overflow-wrap:anywhere}
.bar{height:14px;background:#e3e3e3;border-radius:7px;overflow:hidden}.bar i{display:block;height:100%;
background:#1d4ed8}.bar.m i{background:#f59e0b}.mine{font-weight:700}#sentence{font-size:19px;margin:14px 0}
#answers.chips button:not(.send){display:inline-block;width:auto;min-width:56px;margin:0 8px 10px 0;
text-align:center}#answers.chips button.send{display:block}.key{font-size:14px;color:#666}\
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}
button,input{background:#1c1c1c;border-color:#444}#msg,.key,h1{color:#aaa}.bar{background:#333}
button.on{background:#1e2b4d}}
"""

_JS = r"""
(function(){
"use strict";
var $=function(id){return document.getElementById(id)};
var m=location.pathname.match(/\/class\/([A-Za-z0-9]{6})\/?$/);
var base=location.pathname.replace(/\/+$/,"");
function el(tag,cls,text){var e=document.createElement(tag);if(cls)e.className=cls;
  if(text!=null)e.textContent=String(text);return e}
function say(text,bad){var e=$("msg");e.textContent=text||"";e.className=bad?"err":""}
if(!m){
  $("join").hidden=false;
  $("join").addEventListener("submit",function(ev){ev.preventDefault();
    var c=$("code").value.trim().toUpperCase().replace(/[^A-Z0-9]/g,"");
    if(c.length===6){location.href=base+"/"+c}else{say("A room code has 6 letters and digits.",true)}});
  return;
}
var code=m[1].toUpperCase();
$("room").textContent="ROOM "+code;
var store={};try{store=window.localStorage||{}}catch(e){}
function rnd(){var a=new Uint8Array(16);
  (window.crypto||{getRandomValues:function(x){
    for(var i=0;i<x.length;i++)x[i]=Math.random()*256|0;return x}}).getRandomValues(a);
  var s="";for(var i=0;i<a.length;i++)s+=("0"+a[i].toString(16)).slice(-2);return s}
var client;try{client=store.getItem("bve-client")}catch(e){}
if(!client||!/^[A-Za-z0-9_-]{8,64}$/.test(client)){client=rnd();try{store.setItem("bve-client",client)}catch(e){}}
var mine={};try{mine=JSON.parse(store.getItem("bve-mine-"+code)||"{}")||{}}catch(e){mine={}}
function keep(){try{store.setItem("bve-mine-"+code,JSON.stringify(mine))}catch(e){}}
var view=null,shown="",picked={},wait=1500,timer=null,sending=false;
function kind(){return view&&view.question?view.question.kind:""}
function key(){return view?[view.version,view.status,view.question?view.question.id:""].join(":"):""}
function draw(){
  var q=view.question,st=view.status,a=$("answers"),r=$("reveal");
  $("prompt").textContent=q?q.prompt:"";
  a.textContent="";r.textContent="";r.hidden=true;a.className=q&&q.kind==="multi"?"chips":"";
  if(st==="waiting"||!q){say("Waiting for the next question\u2026");return}
  var my=mine[q.id];
  if(st==="open"){
    if(q.kind==="word"){
      var f=el("form");var i=el("input");i.id="word";i.maxLength=40;i.autocomplete="off";i.autocapitalize="none";
      i.setAttribute("aria-label","Your word");if(my)i.value=my;var b=el("button","send","Send");b.type="submit";
      f.appendChild(i);f.appendChild(b);f.addEventListener("submit",function(ev){ev.preventDefault();send(i.value)});
      a.appendChild(f);
    }else{
      picked={};if(my&&q.kind==="multi"){my.split("|").forEach(function(v){picked[v]=1})}
      q.choices.forEach(function(c){var b=el("button",(my===c||picked[c])?"on":"",c);b.type="button";
        b.addEventListener("click",function(){
          if(q.kind==="choice"){send(c)}
          else{if(picked[c]){delete picked[c]}else{picked[c]=1}b.className=picked[c]?"on":""}});
        a.appendChild(b)});
      if(q.kind==="multi"){var s=el("button","send","Send");s.type="button";s.addEventListener("click",function(){
        send(q.choices.filter(function(c){return picked[c]}).join("|"))});a.appendChild(s)}
    }
    say(my?"Your answer: "+my+". You can change it until the question closes.":"Answer before the model does.");
    return;
  }
  if(st==="closed"){
    say(my?"Closed. Your answer: "+my+". Waiting for the reveal\u2026":"Closed. Waiting for the reveal\u2026");return}
  say(my?"Your answer: "+my:"");
  var p=view.reveal||{},rows=Array.isArray(p.rows)?p.rows:[],total=0;
  rows.forEach(function(w){total+=Math.max(0,+w.count||0)});
  if(p.sentence){r.appendChild(el("p","",p.sentence)).id="sentence"}
  rows.slice(0,30).forEach(function(w){
    var share=typeof w.share==="number"?w.share:(total?(+w.count||0)/total:0);
    var d=el("div","row"),l=el("div","lab"+(String(w.label)===my?" mine":""));
    l.appendChild(el("span","",(w.answer?"\u2713 ":"")+w.label));
    l.appendChild(el("span","",Math.round(share*100)+"%"+
      (typeof w.model==="number"?" \u00b7 model "+Math.round(w.model*100)+"%":"")));
    var b=el("div","bar"),i=el("i");i.style.width=Math.max(0,Math.min(100,share*100))+"%";b.appendChild(i);
    d.appendChild(l);d.appendChild(b);
    if(typeof w.model==="number"){var b2=el("div","bar m"),i2=el("i");
      i2.style.width=Math.max(0,Math.min(100,w.model*100))+"%";b2.appendChild(i2);d.appendChild(b2)}
    r.appendChild(d)});
  if(rows.some(function(w){return typeof w.model==="number"}))
    r.appendChild(el("p","key","Blue: the class. Orange: the model."));
  r.hidden=false;
}
function poll(){
  clearTimeout(timer);
  var x=new XMLHttpRequest();x.open("GET",base+"/state"+(view?"?v="+view.version:""));x.timeout=8000;
  x.onload=function(){
    if(x.status===404){
      view=null;$("answers").textContent="";$("prompt").textContent="";say("This room has closed.",true);return}
    if(x.status===200){try{var s=JSON.parse(x.responseText);
      if(view&&s.version===view.version&&!("question" in s)){view.count=s.count;view.status=s.status}else{view=s}
      wait=view.status==="open"||view.status==="closed"?1500:2500;if(key()!==shown&&!sending){shown=key();draw()}}catch(e){}}
    else{wait=Math.min(wait*2,8000)}
    next()};
  x.onerror=x.ontimeout=function(){wait=Math.min(wait*2,8000);next()};
  x.send();
}
function next(){timer=setTimeout(poll,(document.hidden?4*wait:wait)*(0.8+0.4*Math.random()))}
function send(value){
  var q=view&&view.question;if(!q||sending)return;
  value=String(value).trim();if(!value){say("Pick or type an answer first.",true);return}
  sending=true;say("Sending\u2026");
  var x=new XMLHttpRequest();x.open("POST",base+"/answer");
  x.setRequestHeader("Content-Type","application/json");x.timeout=10000;
  x.onload=function(){sending=false;var r={};try{r=JSON.parse(x.responseText)}catch(e){}
    if(r.ok){mine[q.id]=q.kind==="word"?value.toLowerCase():value;keep();shown=key();draw()}
    else{var w={closed:"The question has closed.",stale:"The question changed.",
      invalid:"That is not an answer to this question.",limited:"Too many answers: wait a few seconds.",
      unknown:"This room has closed."}[r.error]||"Could not send: try again.";
      say(w,true);if(r.error==="stale"||r.error==="closed"){shown="";poll()}}};
  x.onerror=x.ontimeout=function(){sending=false;say("No connection: try again.",true)};
  x.send(JSON.stringify({qid:q.id,client:client,value:value}));
}
document.addEventListener("visibilitychange",function(){if(!document.hidden)poll()});
poll();
})();
"""

_HTML = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>Ask the class</title>
<style>{css}</style></head><body><main><h1 id="room">ASK THE CLASS</h1>
<form id="join" hidden><input id="code" maxlength="8" autocomplete="off" autocapitalize="characters"
placeholder="Room code" aria-label="Room code"><button class="send" type="submit">Join</button></form>
<p id="prompt" aria-live="polite"></p><div id="answers"></div><div id="msg" aria-live="polite"></div>
<section id="reveal" hidden></section></main><script>{js}</script></body></html>"""

PAGE = _HTML.format(css=_CSS.strip(), js=_JS.strip()).encode()


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


CSP = (
    f"default-src 'none'; script-src {_sha(_JS.strip())}; style-src {_sha(_CSS.strip())}; "
    "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
)
# the bars' widths are set through element.style (CSSOM), which style-src does not restrict
PAGE_ETAG = '"' + hashlib.sha256(PAGE).hexdigest()[:16] + '"'
_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}
_STATUS = {"unknown": 404, "stale": 409, "closed": 409, "invalid": 422, "limited": 429}


def _json(data: dict, status: int = 200) -> Response:
    body = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    body = body.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")  # JSON all the same
    return Response(body, status, media_type="application/json", headers={**_HEADERS, "Cache-Control": "no-store"})


class Unavailable(Exception):
    """The rooms' store did not answer (Redis down or unreachable): the phone is told 503 and polls again later."""


async def _call(method, *args):
    """A rooms call: at once in process, in a worker thread when it is a network round trip (Redis)."""
    try:
        store = _rooms.rooms()
        fn = getattr(store, method)
        return await run_in_threadpool(fn, *args) if getattr(store, "blocking", True) else fn(*args)
    except Exception as e:  # never a traceback to a phone
        _LOG.warning("class rooms %s failed: %s: %s", method, type(e).__name__, e)
        raise Unavailable from e


async def _unavailable(request: Request, exc: Exception) -> Response:
    return _json({"ok": False, "error": "unavailable"}, 503)


def _code(request: Request) -> str | None:
    return _rooms._code(request.path_params.get("code"))


async def page(request: Request) -> Response:
    code = request.path_params.get("code")
    if code is not None and (_rooms._code(code) is None or await _call("view", code) is None):
        return Response(
            "No room with this code: ask for the code again.", 404, media_type="text/plain", headers=_HEADERS
        )
    if request.headers.get("if-none-match") == PAGE_ETAG:
        return Response(status_code=304, headers={"ETag": PAGE_ETAG})
    return Response(
        PAGE,
        media_type="text/html; charset=utf-8",
        headers={**_HEADERS, "Content-Security-Policy": CSP, "ETag": PAGE_ETAG, "Cache-Control": "no-cache"},
    )


async def state(request: Request) -> Response:
    code = _code(request)
    view = await _call("view", code) if code else None
    if view is None:
        return _json({"error": "unknown"}, 404)
    if request.query_params.get("v") == str(view["version"]):
        return _json({"status": view["status"], "count": view["count"], "version": view["version"]})
    return _json(view)


async def _body(request: Request) -> bytes | None:
    """The request's body, or None when it is longer than MAX_BODY (read no further than that)."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        return None
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            return None
    return body


async def answer(request: Request) -> Response:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return _json({"ok": False, "error": "invalid"}, 415)
    body = await _body(request)
    if body is None:
        return _json({"ok": False, "error": "invalid"}, 413)
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        data = None
    if not isinstance(data, dict):
        return _json({"ok": False, "error": "invalid"}, 422)
    code = _code(request)
    if code is None:
        return _json({"ok": False, "error": "unknown"}, 404)
    qid, client, value = data.get("qid"), data.get("client"), data.get("value")
    error = await _call("answer", code, qid, client, value)
    if error is not None:
        return _json({"ok": False, "error": error}, _STATUS.get(error, 400))
    return _json({"ok": True})


def _guarded(endpoint):
    """The endpoint, answering 503 JSON when the rooms' store fails (a route's exception handler would need the
    app's; these routes also live inside Streamlit's)."""

    @functools.wraps(endpoint)
    async def guarded(request: Request) -> Response:
        try:
            return await endpoint(request)
        except Unavailable as e:
            return await _unavailable(request, e)

    return guarded


def routes(base: str = "") -> list[Route]:
    """The routes, under Streamlit's ``server.baseUrlPath`` (``base``) when it has one."""
    base = "/" + base.strip("/") if base and base.strip("/") else ""
    return [
        Route(f"{base}/class", _guarded(page), methods=["GET"], name=f"{ROUTE_NAME}-join"),
        Route(f"{base}/class/", _guarded(page), methods=["GET"], name=f"{ROUTE_NAME}-join-slash"),
        Route(f"{base}/class/{{code}}", _guarded(page), methods=["GET"], name=f"{ROUTE_NAME}-page"),
        Route(f"{base}/class/{{code}}/", _guarded(page), methods=["GET"], name=f"{ROUTE_NAME}-page-slash"),
        Route(f"{base}/class/{{code}}/state", _guarded(state), methods=["GET"], name=f"{ROUTE_NAME}-state"),
        Route(f"{base}/class/{{code}}/answer", _guarded(answer), methods=["POST"], name=f"{ROUTE_NAME}-answer"),
    ]
