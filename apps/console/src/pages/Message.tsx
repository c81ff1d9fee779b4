import { useMemo, useState } from 'react';
import { api } from '../api/client';
import type { MessageDetails, MessageEvent } from '../api/types';
import { Show, Time, useLoad } from '../components/common';
import { previewDocument } from '../htmlPreview';
import { Link } from '../router';
import { StatusBadge } from './Activity';

/** One message: who, what, its events per recipient with the receiving servers' answers, its bodies. */
export function MessagePage({ id }: { id: string }) {
  const message = useLoad(() => api.message(id), [id]);
  return (
    <>
      <p>
        <Link to="/activity">← Activity</Link>
      </p>
      <Show loaded={message} what="this message">
        {(data) => <Details message={data} />}
      </Show>
    </>
  );
}

function Details({ message }: { message: MessageDetails }) {
  const byRecipient = new Map<string, MessageEvent[]>();
  for (const recipient of message.Recipients) byRecipient.set(recipient, []);
  for (const event of message.MessageEvents) {
    const list = byRecipient.get(event.Recipient) ?? [];
    list.push(event);
    byRecipient.set(event.Recipient, list);
  }
  const metadata = Object.entries(message.Metadata);
  return (
    <>
      <h1>{message.Subject || '(no subject)'}</h1>
      <section className="card">
        <dl className="fields">
          <dt>Status</dt>
          <dd>
            <StatusBadge status={message.Status} />
          </dd>
          <dt>Message ID</dt>
          <dd>
            <code>{message.MessageID}</code>
          </dd>
          <dt>Received</dt>
          <dd>
            <Time at={message.ReceivedAt} />
          </dd>
          <dt>From</dt>
          <dd>{message.From}</dd>
          {message.ReplyTo ? (
            <>
              <dt>Reply to</dt>
              <dd>{message.ReplyTo}</dd>
            </>
          ) : null}
          <dt>To</dt>
          <dd>{message.To.map((to) => (to.Name ? `${to.Name} <${to.Email}>` : to.Email)).join(', ') || '—'}</dd>
          {message.Cc.length > 0 ? (
            <>
              <dt>Cc</dt>
              <dd>{message.Cc.map((cc) => cc.Email).join(', ')}</dd>
            </>
          ) : null}
          {message.Bcc.length > 0 ? (
            <>
              <dt>Bcc</dt>
              <dd>{message.Bcc.map((bcc) => bcc.Email).join(', ')}</dd>
            </>
          ) : null}
          <dt>Tag</dt>
          <dd>{message.Tag || <span className="muted">none</span>}</dd>
          <dt>Stream</dt>
          <dd>{message.MessageStream}</dd>
          {message.Attachments.length > 0 ? (
            <>
              <dt>Attachments</dt>
              <dd>{message.Attachments.join(', ')}</dd>
            </>
          ) : null}
        </dl>
      </section>

      <section className="card">
        <h2>What happened, per recipient</h2>
        {[...byRecipient.entries()].map(([recipient, events]) => (
          <div key={recipient} className="timeline-block">
            <h3>{recipient}</h3>
            {events.length === 0 ? (
              <p className="muted">No event yet.</p>
            ) : (
              <ol className="timeline" aria-label={`Events for ${recipient}`}>
                {events.map((event, index) => (
                  <li key={index} data-event={event.Type}>
                    <span className={`badge ${toneOf(event.Type)}`}>{EVENT_NAMES[event.Type] ?? event.Type}</span>{' '}
                    <Time at={event.ReceivedAt} />
                    {event.Details.ReportID ? <p className="muted came-back">{cameBackNote(event.Type)}</p> : null}
                    <EventDetails details={event.Details} />
                  </li>
                ))}
              </ol>
            )}
          </div>
        ))}
      </section>

      <section className="card">
        <h2>Metadata</h2>
        {metadata.length === 0 ? (
          <p className="muted">No metadata.</p>
        ) : (
          <dl className="fields">
            {metadata.map(([name, value]) => (
              <div key={name} className="pair">
                <dt>{name}</dt>
                <dd>{value}</dd>
              </div>
            ))}
          </dl>
        )}
      </section>

      <section className="card">
        <h2>Headers</h2>
        {message.Headers.length === 0 ? (
          <p className="muted">No extra header.</p>
        ) : (
          <div className="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {message.Headers.map((header, index) => (
                  <tr key={index}>
                    <td>
                      <code>{header.Name}</code>
                    </td>
                    <td className="wrap">{header.Value}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <HtmlBody html={message.HtmlBody} />

      <section className="card">
        <h2>Text body</h2>
        {message.TextBody ? (
          <pre className="text-body" tabIndex={0} aria-label="Text body">
            {message.TextBody}
          </pre>
        ) : (
          <p className="muted">No text body.</p>
        )}
      </section>
    </>
  );
}

function toneOf(type: string): string {
  if (type === 'Delivered') return 'good';
  if (type === 'Bounced' || type === 'Rejected' || type === 'SpamComplaint') return 'bad';
  if (type === 'Transient') return 'warn';
  return '';
}

/** The API's event types in words, where its name is not plain English. */
const EVENT_NAMES: Record<string, string> = {
  SpamComplaint: 'Spam complaint',
  AutoResponder: 'Automatic reply',
};

/** What came back after the SMTP conversation (an event with a ReportID), said in words. */
function cameBackNote(type: string): string {
  switch (type) {
    case 'SpamComplaint':
      return "The recipient marked it as spam (their provider's report); the address is suppressed.";
    case 'AutoResponder':
      return 'An automatic reply came back (out of office, vacation…); nothing changes.';
    case 'Transient':
      return 'A delivery report said it is delayed; the receiving server is still trying.';
    default:
      return 'A delivery report came back after the receiving server had taken it: it was not delivered after all.';
  }
}

const DETAIL_LABELS: Record<string, string> = {
  DeliveryMessage: "Receiving server's answer",
  DestinationServer: 'Receiving server',
  DestinationIP: 'Receiving address',
  Summary: 'Summary',
  BounceType: 'Bounce type',
  BounceID: 'Bounce ID',
  SmtpCode: 'SMTP code',
  FeedbackType: 'Feedback type',
  UserAgent: 'Reported by',
  ReportID: 'Report',
  ReturnPath: 'Return-Path (envelope sender)',
};

/** Details shown as code: what a server answered, and the address bounces go to. */
const AS_CODE = new Set(['DeliveryMessage', 'ReturnPath']);

function EventDetails({ details }: { details: Record<string, string> }) {
  const shown = Object.entries(details).filter(([, value]) => value !== '');
  if (shown.length === 0) return null;
  return (
    <dl className="event-details">
      {shown.map(([name, value]) => (
        <div key={name} className="pair">
          <dt>{DETAIL_LABELS[name] ?? name}</dt>
          <dd>{AS_CODE.has(name) ? <code>{value}</code> : value}</dd>
        </div>
      ))}
    </dl>
  );
}

function HtmlBody({ html }: { html: string }) {
  const [remoteImages, setRemoteImages] = useState(false);
  const document = useMemo(() => (html ? previewDocument(html, remoteImages) : ''), [html, remoteImages]);
  return (
    <section className="card">
      <h2>HTML body</h2>
      {html ? (
        <>
          <p className="muted">
            Shown in a sandbox: no script runs and, unless you allow it, no remote image loads (senders track opens with
            them).
          </p>
          <label className="inline">
            <input type="checkbox" checked={remoteImages} onChange={(event) => setRemoteImages(event.target.checked)} />{' '}
            Load remote images
          </label>
          <iframe className="html-body" title="HTML body of the message" sandbox="" srcDoc={document} />
        </>
      ) : (
        <p className="muted">No HTML body.</p>
      )}
    </section>
  );
}
