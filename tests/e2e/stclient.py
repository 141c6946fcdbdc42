"""A browserless Streamlit client: speaks the app's own websocket protocol (protobuf BackMsg/ForwardMsg
on ``/_stcore/stream``) the way the frontend does, so the server can be loaded by many sessions without
a renderer each. Used to tell server-side stalls from browser-side ones (scripts/benchmark.py) and to
open many pages at once on a fresh server (tests/e2e/test_class.py).

It does what a browser tab does to the server and nothing else: open a page with a query string, wait
for the script run to finish, read the elements it drew (exceptions, number inputs, the URL it wrote),
and change one widget value, which reruns the script.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.NumberInput_pb2 import NumberInput

FINISHED = ForwardMsg.ScriptFinishedStatus.Value("FINISHED_SUCCESSFULLY")


@dataclass
class Run:
    """What one script run sent: seconds from request to finish, exception texts, number inputs
    (label -> (widget id, value, data type)), and the query string the page wrote."""

    seconds: float
    exceptions: list[str] = field(default_factory=list)
    traces: list[str] = field(default_factory=list)  # each exception's stack trace, as the page shows it
    number_inputs: dict[str, tuple[str, float, int]] = field(default_factory=dict)
    query: str | None = None
    messages: int = 0


class Session:
    """One browser tab's worth of server session."""

    def __init__(self, base: str):
        self.url = base.replace("http://", "ws://").rstrip("/") + "/_stcore/stream"
        self.ws = None
        self.page = ""
        self.query = ""
        self.last: Run | None = None

    async def __aenter__(self):
        self.ws = await websockets.connect(
            self.url, subprotocols=["streamlit"], max_size=None, open_timeout=120, ping_interval=None
        )
        return self

    async def __aexit__(self, *exc):
        await self.ws.close()

    async def open(self, page: str, query: str = "", timeout: float = 120) -> Run:
        """What a browser does when it loads ``/<page>?<query>``."""
        self.page, self.query = page, query
        return await self._rerun([], timeout)

    async def set_number(self, label: str, value: float, timeout: float = 120) -> Run:
        """Change the number input labelled ``label`` (as its step buttons do) and wait for the rerun."""
        from streamlit.proto.WidgetStates_pb2 import WidgetState

        wid, _, data_type = self.last.number_inputs[label]
        state = WidgetState(id=wid)
        if data_type == NumberInput.INT:
            state.int_value = int(value)
        else:
            state.double_value = float(value)
        return await self._rerun([state], timeout)

    async def _rerun(self, states, timeout: float) -> Run:
        msg = BackMsg()
        cs = msg.rerun_script
        cs.query_string = self.query
        cs.page_name = self.page
        cs.widget_states.widgets.extend(states)
        t = time.perf_counter()
        await self.ws.send(msg.SerializeToString())
        run = Run(seconds=0.0)
        async with asyncio.timeout(timeout):
            while True:
                fwd = ForwardMsg()
                fwd.ParseFromString(await self.ws.recv())
                run.messages += 1
                kind = fwd.WhichOneof("type")
                if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                    el = fwd.delta.new_element
                    which = el.WhichOneof("type")
                    if which == "exception":
                        run.exceptions.append(f"{el.exception.type}: {el.exception.message}")
                        run.traces.append("\n".join(el.exception.stack_trace))
                    elif which == "number_input":
                        ni = el.number_input
                        value = ni.value if ni.HasField("value") else ni.default
                        run.number_inputs[ni.label] = (ni.id, value, ni.data_type)
                elif kind == "page_info_changed":
                    run.query = self.query = fwd.page_info_changed.query_string
                elif kind == "script_finished" and fwd.script_finished == FINISHED:
                    break
                elif kind == "script_finished":  # finished early for a rerun (st.rerun): a new run follows
                    run.exceptions.clear()
                    run.traces.clear()
                    run.number_inputs.clear()
        run.seconds = time.perf_counter() - t
        self.last = run
        return run
