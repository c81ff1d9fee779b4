"""postmarker (the most downloaded Python client for Postmark) against this service.

Configured as a user would: PostmarkClient(server_token=<key>, root_api_url=<base address>). The client joins its
absolute endpoint paths ("/email") onto root_api_url with urljoin, which keeps only the scheme and host, so it calls
the service's routes at the root. Prints one JSON line with what each call gave; test/compat/compat.test.ts checks it.
"""

import base64
import json
import os
import time
from email.header import Header
from email.mime.application import MIMEApplication
from email.mime.image import MIMEImage
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import formataddr
from importlib.metadata import version

from postmarker.core import PostmarkClient
from postmarker.exceptions import ClientError

env = os.environ
client = PostmarkClient(server_token=env["COMPAT_KEY"], root_api_url=env["COMPAT_ROOT_URL"])
sender, to, tag = env["COMPAT_FROM"], env["COMPAT_TO"], env["COMPAT_TAG"]
results = {"client": "postmarker", "version": version("postmarker")}


def failure(error):
    return {"errorType": type(error).__name__, "errorCode": getattr(error, "error_code", None), "message": str(error)}


sent = client.emails.send(From=sender, To=to, Subject="Compat python", TextBody="body text", Tag=tag)
results["send"] = {"errorCode": sent["ErrorCode"], "messageId": sent["MessageID"], "to": sent["To"]}

batch = client.emails.send_batch(
    {"From": sender, "To": to, "Subject": "Compat python 1", "TextBody": "x", "Tag": tag},
    {"From": sender, "To": to, "Subject": "Compat python 2", "TextBody": "x", "Tag": tag},
)
results["batch"] = [{"errorCode": r["ErrorCode"], "messageId": r["MessageID"]} for r in batch]

# The activity list is fed by the projector: give it a few seconds to see the three messages.
deadline = time.time() + 30
while True:
    listed = client.messages.outbound.all(count=10, offset=0, recipient=to, tag=tag)
    if len(listed) >= 3 or time.time() > deadline:
        break
    time.sleep(0.5)
results["list"] = {"totalCount": len(listed), "messageIds": [m.MessageID for m in listed]}

details = client.messages.outbound.get(sent["MessageID"])
results["details"] = {
    "messageId": details.MessageID,
    "textBody": details.TextBody,
    "eventTypes": [event["Type"] for event in details.MessageEvents],
}

# The MIME path: a message built with the standard library's email package, handed to postmarker as is. Its
# attachments' payloads are base64 as the email package writes it (wrapped at 76 characters, ending with a newline),
# its headers RFC 2047 encoded words where they are not ASCII (postmarker decodes them before sending).
PDF = b"%PDF-1.4\n" + bytes(range(256)) * 4
PNG_BASE64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
mime = MIMEMultipart("mixed")
mime["From"] = formataddr(("Zoë Büro", sender), charset="utf-8")
mime["To"] = formataddr(("Ånn Lee", to), charset="utf-8")
mime["Subject"] = Header("Rechnung März — ünïcödé", "utf-8")
body = MIMEMultipart("alternative")
body.attach(MIMEText("Grüße, your invoice", "plain", "utf-8"))
body.attach(MIMEText('<p>Grüße</p><img src="cid:logo@compat">', "html", "utf-8"))
mime.attach(body)
invoice = MIMEApplication(PDF, "pdf")
invoice.add_header("Content-Disposition", "attachment", filename=("utf-8", "", "Rechnung-März.pdf"))
mime.attach(invoice)
logo = MIMEImage(base64.b64decode(PNG_BASE64), "png")
logo.add_header("Content-ID", "<logo@compat>")
logo.add_header("Content-Disposition", "inline", filename="logo.png")
mime.attach(logo)
mime.tag = tag
mime_sent = client.emails.send(message=mime)
results["mime"] = {
    "errorCode": mime_sent["ErrorCode"],
    "messageId": mime_sent["MessageID"],
    "wrapped": "\n" in invoice.get_payload(),
    "pdfBase64": base64.b64encode(PDF).decode(),
}

try:
    PostmarkClient(server_token="sl_live_" + "z" * 40, root_api_url=env["COMPAT_ROOT_URL"]).emails.send(
        From=sender, To=to, Subject="x", TextBody="x"
    )
    results["wrongKey"] = {"errorType": None}
except ClientError as error:
    results["wrongKey"] = failure(error)

try:
    client.emails.send(From=sender, To=env["COMPAT_GONE"], Subject="x", TextBody="x")
    results["inactive"] = {"errorType": None}
except ClientError as error:
    results["inactive"] = failure(error)

print(json.dumps(results))
