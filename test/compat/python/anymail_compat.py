"""django-anymail (Django's most used email-provider package) against this service: test/compat/anymail.test.ts.

Configured as a Django project would be, only its Postmark settings pointed at us: EMAIL_BACKEND is anymail's
Postmark backend, ANYMAIL's POSTMARK_API_URL the service's root address, POSTMARK_SERVER_TOKEN a key, and
WEBHOOK_SECRET the "user:password" the webhook's HttpAuth carries. One process serves the whole test, on 127.0.0.1:

  POST /anymail/postmark/tracking/   anymail's own PostmarkTrackingWebhookView (from anymail.urls), the webhook's URL
  POST /anymail/postmark/inbound/    anymail's own PostmarkInboundWebhookView, the organization's InboundHookUrl
  GET  /events                       what anymail's tracking signal received, one object per event, as JSON
  GET  /inbound                      what anymail's inbound signal received: each AnymailInboundMessage, as JSON
  POST /send                         sends through anymail's backend as a Django app does (the scenarios below, the
                                     addresses given as JSON in the body) and answers what each send gave

It prints one JSON line, {"url": "http://127.0.0.1:<port>"}, once it listens.
"""

import json
import os
import sys
import threading
from base64 import b64decode, b64encode
from importlib.metadata import version
from socketserver import ThreadingMixIn
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import django
from django.conf import settings

env = os.environ
settings.configure(
    DEBUG=False,
    SECRET_KEY="sendline-compat",
    ALLOWED_HOSTS=["*"],
    ROOT_URLCONF=__name__,
    INSTALLED_APPS=["anymail"],
    MIDDLEWARE=[],
    USE_TZ=True,
    EMAIL_BACKEND="anymail.backends.postmark.EmailBackend",
    ANYMAIL={
        "POSTMARK_SERVER_TOKEN": env["COMPAT_KEY"],
        "POSTMARK_API_URL": env["COMPAT_ROOT_URL"],
        "WEBHOOK_SECRET": env["COMPAT_WEBHOOK_AUTH"],
    },
    LOGGING_CONFIG=None,
)
django.setup()

from anymail.exceptions import AnymailError  # noqa: E402
from anymail.message import attach_inline_image  # noqa: E402
from anymail.signals import inbound, tracking  # noqa: E402
from django.core.mail import EmailMessage, EmailMultiAlternatives, get_connection  # noqa: E402
from django.http import HttpResponse, JsonResponse  # noqa: E402
from django.urls import include, path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402

# A one-pixel PNG and a small PDF-like file: bytes the test compares with what was delivered.
PNG = b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PDF = b"%PDF-1.4\n" + bytes(range(256)) * 4 + b"\n%%EOF\n"

received = []
lock = threading.Lock()


def on_tracking(sender, event, esp_name, **kwargs):
    with lock:
        received.append(
            {
                "espName": esp_name,
                "recordType": event.esp_event.get("RecordType"),
                "type": event.esp_event.get("Type"),
                "eventType": event.event_type,
                "recipient": event.recipient,
                "messageId": event.message_id,
                "timestamp": event.timestamp.isoformat() if event.timestamp else None,
                # The time field as the webhook gave it, to compare with what anymail parsed.
                "sentTime": next(
                    (event.esp_event[name] for name in ("DeliveredAt", "BouncedAt", "ChangedAt") if name in event.esp_event),
                    None,
                ),
                "tags": event.tags,
                "metadata": event.metadata,
                "rejectReason": event.reject_reason,
                "eventId": event.event_id,
                "mtaResponse": event.mta_response,
                "description": event.description,
            }
        )


tracking.connect(on_tracking)

inbound_received = []


def part_of(part):
    return {
        "name": part.get_filename(),
        "contentType": part.get_content_type(),
        "content": b64encode(part.get_content_bytes()).decode("ascii"),
    }


def on_inbound(sender, event, esp_name, **kwargs):
    message = event.message
    with lock:
        inbound_received.append(
            {
                "espName": esp_name,
                "eventType": event.event_type,
                "eventId": event.event_id,
                "from": str(message.from_email) if message.from_email else None,
                "fromAddress": message.from_email.addr_spec if message.from_email else None,
                "to": [address.addr_spec for address in message.to],
                "envelopeRecipient": message.envelope_recipient,
                "envelopeSender": message.envelope_sender,
                "subject": message.get("Subject"),
                "text": message.text,
                "html": message.html,
                "strippedText": message.stripped_text,
                "rawEmail": "RawEmail" in event.esp_event,
                "attachments": [part_of(attachment) for attachment in message.attachments],
                # Without RawEmail anymail makes each of Postmark's Attachments inline when it has a ContentID key,
                # and Postmark's (and our) JSON gives an attachment without one "ContentID": "".
                "inlines": [part_of(inline) for inline in message.inlines],
            }
        )


inbound.connect(on_inbound)


def status_of(message):
    status = message.anymail_status
    return {
        "messageId": status.message_id if isinstance(status.message_id, str) else sorted(status.message_id or []),
        "status": sorted(status.status or []),
        "recipients": {
            address: {"status": recipient.status, "messageId": recipient.message_id}
            for address, recipient in status.recipients.items()
        },
    }


def failure(error):
    response = getattr(error, "response", None)
    body = None
    if response is not None:
        try:
            body = response.json()
        except ValueError:
            body = None
    return {
        "errorType": type(error).__name__,
        "isAnymailError": isinstance(error, AnymailError),
        "status": getattr(error, "status_code", None),
        "errorCode": body.get("ErrorCode") if isinstance(body, dict) else None,
        "message": body.get("Message") if isinstance(body, dict) else str(error),
    }


def attempt(send):
    try:
        send()
        return {"errorType": None}
    except Exception as error:  # noqa: BLE001 - the test reads which error it was
        return failure(error)


def send_all(given):
    sender = given["from"]
    results = {"django": version("django"), "anymail": version("django-anymail")}

    # An EmailMessage with an attachment, cc, bcc, two reply-to addresses, custom headers, a tag and metadata
    # (a number among the values, as a Django app passes them).
    plain = EmailMessage(
        subject="Invoice 42",
        body="Your invoice is attached.",
        from_email=f"Billing <{sender}>",
        to=[given["to"]],
        cc=[given["cc"]],
        bcc=[given["bcc"]],
        reply_to=given["replyTo"],
        headers={"X-Invoice-Number": "42", "x-lower-case": "kept"},
    )
    plain.attach("invoice.pdf", PDF, "application/pdf")
    plain.tags = [given["tag"]]
    plain.metadata = {"order": 42, "customer": "c-7"}
    plain.send()
    results["plain"] = status_of(plain)

    # An EmailMultiAlternatives: text and HTML, an inline image referenced by its Content-ID, a text attachment.
    multi = EmailMultiAlternatives(
        subject="Your receipt — merci",
        body="Receipt in text",
        from_email=sender,
        to=[given["multiTo"]],
    )
    cid = attach_inline_image(multi, PNG, "logo.png")
    multi.attach_alternative(f'<p>Receipt</p><img src="cid:{cid}" alt="logo">', "text/html")
    multi.attach("notes.txt", "Grüße aus Köln\n", "text/plain")
    multi.tags = [given["tag"]]
    multi.metadata = {"kind": "receipt"}
    multi.send()
    results["multi"] = {**status_of(multi), "cid": cid}

    # merge_metadata makes anymail send one message per To recipient, as one /email/batch request.
    batch = EmailMessage(subject="Batch", body="Hello", from_email=sender, to=given["batch"])
    batch.tags = [given["tag"]]
    batch.metadata = {"campaign": "december"}
    batch.merge_metadata = {address: {"position": index + 1} for index, address in enumerate(given["batch"])}
    batch.send()
    results["batch"] = status_of(batch)

    # One message per bounce the service sends a webhook for, straight from the SMTP conversation.
    results["bounces"] = {}
    for address in given["bounces"]:
        message = EmailMessage(subject="Bounce", body="x", from_email=sender, to=[address])
        message.tags = [given["tag"]]
        message.metadata = {"case": "bounce"}
        message.send()
        results["bounces"][address] = status_of(message)

    # template_id (a number: TemplateId) with merge_global_data: one /email/withTemplate; the template gives the
    # subject and bodies. With merge_data (an alias: TemplateAlias), one /email/batchWithTemplates, one message per To.
    templated = EmailMessage(from_email=sender, to=[given["templateTo"]])
    templated.template_id = given["templateId"]
    templated.merge_global_data = {"name": "Ann", "order": {"number": 42}}
    templated.tags = [given["tag"]]
    templated.send()
    results["templated"] = status_of(templated)

    merged = EmailMessage(from_email=sender, to=given["templateBatch"])
    merged.template_id = given["templateAlias"]
    merged.merge_global_data = {"order": {"number": 7}}
    merged.merge_data = {address: {"name": f"Reader {index + 1}"} for index, address in enumerate(given["templateBatch"])}
    merged.tags = [given["tag"]]
    merged.send()
    results["merged"] = status_of(merged)

    # Refusals: anymail's own errors, with the service's ErrorCode in the response they keep.
    results["foreignFrom"] = attempt(
        lambda: EmailMessage(subject="x", body="x", from_email=given["foreignFrom"], to=[given["to"]]).send()
    )
    results["wrongKey"] = attempt(
        lambda: EmailMessage(
            subject="x",
            body="x",
            from_email=sender,
            to=[given["to"]],
            connection=get_connection(server_token="sl_live_" + "z" * 40),
        ).send()
    )

    def too_much_metadata():
        message = EmailMessage(subject="x", body="x", from_email=sender, to=[given["to"]])
        message.metadata = {f"k{index}": index for index in range(11)}
        message.send()

    results["invalid"] = attempt(too_much_metadata)
    results["inactive"] = attempt(
        lambda: EmailMessage(subject="x", body="x", from_email=sender, to=[given["gone"]]).send()
    )
    return results


@csrf_exempt
def send_view(request):
    return JsonResponse(send_all(json.loads(request.body)))


def events_view(request):
    with lock:
        return JsonResponse({"events": list(received)})


def inbound_view(request):
    with lock:
        return JsonResponse({"messages": list(inbound_received)})


def health_view(request):
    return HttpResponse("ok")


urlpatterns = [
    path("anymail/", include("anymail.urls")),
    path("events", events_view),
    path("inbound", inbound_view),
    path("send", send_view),
    path("health", health_view),
]


class ThreadingServer(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class QuietHandler(WSGIRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - wsgiref's signature
        pass


if __name__ == "__main__":
    from django.core.wsgi import get_wsgi_application

    server = make_server(
        "127.0.0.1", 0, get_wsgi_application(), server_class=ThreadingServer, handler_class=QuietHandler
    )
    print(json.dumps({"url": f"http://127.0.0.1:{server.server_port}"}), flush=True)
    sys.stdout.flush()
    server.serve_forever()
