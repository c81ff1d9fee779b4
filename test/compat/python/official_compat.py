"""postmark-python (Postmark's own Python SDK) against this service, configured as a user would:
ServerClient(server_token=<key>, base_url="http://host:port/v1"). The client is httpx's AsyncClient with that
base_url, which keeps its path and appends the relative endpoint ("/email" → /v1/email). Prints one JSON line with
what each call gave; test/compat/compat.test.ts checks it.
"""

import asyncio
import json
import os
import time
from importlib.metadata import version

from postmark import PostmarkAPIException, ServerClient

env = os.environ
sender, to, tag = env["COMPAT_FROM"], env["COMPAT_TO"], env["COMPAT_TAG"]


def failure(error):
    return {
        "errorType": type(error).__name__,
        "errorCode": getattr(error, "error_code", None),
        "status": getattr(error, "http_status", None),
        "message": str(error),
    }


def message(recipient, subject):
    return {"From": sender, "To": recipient, "Subject": subject, "TextBody": "body text", "Tag": tag}


async def dumped(client, address):
    return any(entry.email_address == address for entry in await client.suppressions.dump("outbound"))


async def main():
    results = {"client": "postmark-python", "version": version("postmark-python")}
    # retries=0: an error answer is reported at once, not retried.
    client = ServerClient(server_token=env["COMPAT_KEY"], base_url=env["COMPAT_BASE_URL"], retries=0)

    sent = await client.outbound.send(message(to, "Compat python official"))
    results["send"] = {"errorCode": sent.error_code, "messageId": sent.message_id, "to": sent.to}

    batch = await client.outbound.send_batch([message(to, "Compat official 1"), message(to, "Compat official 2")])
    results["batch"] = [{"errorCode": r.error_code, "messageId": r.message_id} for r in batch]

    # The activity list is fed by the projector: give it a few seconds to see the three messages.
    deadline = time.time() + 30
    while True:
        page = await client.outbound.list(count=10, offset=0, recipient=to, tag=tag)
        if page.total >= 3 or time.time() > deadline:
            break
        await asyncio.sleep(0.5)
    results["list"] = {"totalCount": page.total, "messageIds": [m.message_id for m in page.items]}

    try:
        details = await client.outbound.get(sent.message_id)
        results["details"] = {
            "messageId": details.message_id,
            "textBody": details.text_body,
            "eventTypes": [event.type.value for event in details.message_events],
        }
    except Exception as error:  # the client's own validation, reported rather than fatal
        results["details"] = failure(error)

    dump = env["COMPAT_DUMP"]
    results["dump"] = {"contains": await dumped(client, dump)}
    deleted = await client.suppressions.delete("outbound", [dump])
    results["delete"] = {"status": deleted[0].status}
    results["dumpAfterDelete"] = {"contains": await dumped(client, dump)}

    stranger = ServerClient(server_token="sl_live_" + "z" * 40, base_url=env["COMPAT_BASE_URL"], retries=0)
    try:
        await stranger.outbound.send(message(to, "x"))
        results["wrongKey"] = {"errorType": None}
    except PostmarkAPIException as error:
        results["wrongKey"] = failure(error)
    finally:
        await stranger.close()

    try:
        await client.outbound.send(message(env["COMPAT_GONE"], "x"))
        results["inactive"] = {"errorType": None}
    except PostmarkAPIException as error:
        results["inactive"] = failure(error)

    await client.close()
    print(json.dumps(results))


asyncio.run(main())
