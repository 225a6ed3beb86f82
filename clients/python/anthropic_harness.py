"""The harness of the Anthropic Python SDK (anthropic 0.121.0) for
'retrysim validate --exec': RETRYSIM_CLIENTS callers at once, each with its
own client (default retries) naming itself in RETRYSIM_CLIENT_HEADER, one
call each, streamed when RETRYSIM_STREAM is 1. The server counts what
happened; this exits 0 whatever the calls did."""

import os
import threading

import anthropic

clients = int(os.environ["RETRYSIM_CLIENTS"])
header = os.environ["RETRYSIM_CLIENT_HEADER"]
stream = os.environ.get("RETRYSIM_STREAM") == "1"
params = {"model": "claude-test", "max_tokens": 16, "messages": [{"role": "user", "content": "hi"}]}
failed = []


def call(i):
    client = anthropic.Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key="retrysim",
                                 default_headers={header: f"c{i}"})
    try:
        if stream:
            with client.messages.stream(**params) as s:
                for _ in s:
                    pass
        else:
            client.messages.create(**params)
    except anthropic.APIError as e:
        failed.append(type(e).__name__)


threads = [threading.Thread(target=call, args=(i,)) for i in range(clients)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(f"anthropic (python): {clients} callers, {clients - len(failed)} completed, {len(failed)} failed")
