import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { INBOUND_STATUSES, type InboundFilters, type InboundSettings, type Me } from '../api/types';
import { ConfirmButton, CopyButton, ErrorNotice, Pager, Show, Time, useAction, useLoad } from '../components/common';
import { SearchFilters, useSearchedList, type FilterField } from '../components/SearchFilters';
import { Link } from '../router';

const PAGE = 50;
/** The search form's fields, in the order shown: Postmark's filters of GET /messages/inbound. */
const FIELDS: readonly FilterField<keyof InboundFilters>[] = [
  { name: 'recipient', label: 'Recipient', kind: 'search' },
  { name: 'fromemail', label: 'From', kind: 'search' },
  { name: 'subject', label: 'Subject', kind: 'search' },
  { name: 'mailboxhash', label: 'Mailbox hash', kind: 'search' },
  { name: 'tag', label: 'Tag', kind: 'search' },
  { name: 'status', label: 'Status', kind: 'choice', choices: INBOUND_STATUSES },
  { name: 'fromdate', label: 'From day (UTC)', kind: 'date' },
  { name: 'todate', label: 'To day (UTC)', kind: 'date' },
];
const FILTERS = FIELDS.map((field) => field.name);

/**
 * Inbound mail (issue 35): the organization's inbound address and hook URL, its inbound rules, and the inbound
 * messages searched with Postmark's filters (kept in the address, so a search is a link).
 */
export function InboundPage({ me }: { me: Me }) {
  const {
    filters,
    offset,
    list: messages,
    go,
  } = useSearchedList(FILTERS, '/inbound', (filters: InboundFilters, offset) =>
    api.inboundMessages(filters, PAGE, offset),
  );

  return (
    <>
      <h1>Inbound</h1>
      <p className="muted">
        Mail sent to the organization&apos;s inbound address is parsed into Postmark&apos;s inbound JSON and posted to
        the hook URL.
      </p>
      <Settings me={me} />
      <Rules me={me} />
      <h2>Inbound messages</h2>
      <SearchFilters
        label="Search inbound messages"
        idPrefix="inbound-filter"
        fields={FIELDS}
        initial={filters}
        onSearch={(next) => go(next, 0)}
        key={JSON.stringify(filters)}
      />
      <Show loaded={messages} what="inbound messages">
        {(data) =>
          data.InboundMessages.length === 0 ? (
            <div className="card empty">
              <p>
                {Object.keys(filters).length > 0
                  ? 'No inbound message matches these filters. Widen the dates or clear a filter.'
                  : 'No inbound message in the last 30 days. Mail sent to the inbound address shows here.'}
              </p>
            </div>
          ) : (
            <>
              <div className="table-scroll card flush">
                <table aria-busy={messages.loading}>
                  <caption className="visually-hidden">Inbound messages, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Date</th>
                      <th scope="col">Subject</th>
                      <th scope="col">From</th>
                      <th scope="col">To</th>
                      <th scope="col">Mailbox hash</th>
                      <th scope="col">Status</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.InboundMessages.map((message) => (
                      <tr key={message.MessageID}>
                        <td className="nowrap">{message.Date ? <Time at={message.Date} /> : '—'}</td>
                        <td>
                          <Link to={`/inbound/${encodeURIComponent(message.MessageID)}`}>
                            {message.Subject || '(no subject)'}
                          </Link>
                        </td>
                        <td>{message.From}</td>
                        <td className="clip" title={message.OriginalRecipient || message.To}>
                          {message.OriginalRecipient || message.To}
                        </td>
                        <td className="nowrap">{message.MailboxHash}</td>
                        <td>
                          <InboundStatus status={message.Status} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager
                offset={offset}
                count={PAGE}
                total={data.TotalCount}
                onChange={(next) => go(filters, next)}
                what="inbound messages"
              />
            </>
          )
        }
      </Show>
    </>
  );
}

function Settings({ me }: { me: Me }) {
  const settings = useLoad(() => api.inboundSettings(), []);
  return (
    <section className="card" aria-labelledby="inbound-settings">
      <h2 id="inbound-settings">Inbound address and hook</h2>
      <Show loaded={settings} what="the inbound settings">
        {(data) => (
          <>
            <SettingsForm me={me} settings={data} onSaved={settings.reload} />
            <OwnDomain me={me} settings={data} onChanged={settings.reload} />
          </>
        )}
      </Show>
    </section>
  );
}

function SettingsForm({ me, settings, onSaved }: { me: Me; settings: InboundSettings; onSaved: () => void }) {
  const [hookUrl, setHookUrl] = useState(settings.InboundHookUrl);
  const [rawEmail, setRawEmail] = useState(settings.RawEmailEnabled);
  const [saved, setSaved] = useState(false);
  const { busy, error, run } = useAction();
  const canWrite = me.can.manageInbound;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const ok = await run(() =>
      api.changeInboundSettings({ InboundHookUrl: hookUrl.trim(), RawEmailEnabled: rawEmail }),
    );
    if (ok) {
      setSaved(true);
      onSaved();
    }
  };
  return (
    <>
      <dl className="fields">
        <dt>Inbound address</dt>
        <dd className="copyable tight">
          <code>{settings.InboundAddress}</code>
          <CopyButton text={settings.InboundAddress} label="Copy the inbound address" />
        </dd>
        {!canWrite ? (
          <>
            <dt>Hook URL</dt>
            <dd>
              {settings.InboundHookUrl ? <code>{settings.InboundHookUrl}</code> : <span className="muted">none</span>}
            </dd>
            <dt>Raw email</dt>
            <dd>{settings.RawEmailEnabled ? 'Included in the JSON' : 'Not included'}</dd>
          </>
        ) : null}
        {settings.InboundHookSigningSecret ? (
          <>
            <dt>Signing secret</dt>
            <dd className="copyable tight">
              <code>{settings.InboundHookSigningSecret}</code>
              <CopyButton text={settings.InboundHookSigningSecret} label="Copy the hook's signing secret" />
            </dd>
          </>
        ) : null}
      </dl>
      <p className="muted">
        Write <code>{settings.InboundAddress.replace('@', '+anything@')}</code> to have <code>anything</code> given back
        as the message&apos;s MailboxHash.
      </p>
      {canWrite ? (
        <form className="inline-form" onSubmit={submit} aria-label="Inbound hook settings">
          <div className="field grow">
            <label htmlFor="inbound-hook-url">Hook URL (where each inbound message is posted)</label>
            <input
              id="inbound-hook-url"
              type="url"
              value={hookUrl}
              onChange={(event) => setHookUrl(event.target.value)}
              placeholder="https://example.com/inbound"
            />
          </div>
          <div className="field">
            <label className="inline">
              <input type="checkbox" checked={rawEmail} onChange={(event) => setRawEmail(event.target.checked)} />{' '}
              Include the raw email
            </label>
          </div>
          <div className="field actions">
            <button type="submit" className="primary" disabled={busy}>
              Save
            </button>
          </div>
          <ErrorNotice error={error} title="Not saved" />
          {saved ? (
            <p className="notice success" role="status">
              Inbound settings saved.
            </p>
          ) : null}
        </form>
      ) : (
        <p className="notice">
          Your role ({me.role}) can read the inbound settings; an admin or a developer can change them.
        </p>
      )}
    </>
  );
}

/**
 * The organization's own inbound domain (`reply.example.com`): the MX record to publish, "Verify now" looking it up
 * (mail to the domain is taken only once it is found), and changing or removing it.
 */
function OwnDomain({ me, settings, onChanged }: { me: Me; settings: InboundSettings; onChanged: () => void }) {
  const [domain, setDomain] = useState('');
  const [verified, setVerified] = useState(false);
  const change = useAction();
  const verify = useAction();
  const canWrite = me.can.manageInbound;
  const current = settings.InboundDomain;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setVerified(false);
    const ok = await change.run(() => api.changeInboundSettings({ InboundDomain: domain.trim() }));
    if (ok) {
      setDomain('');
      onChanged();
    }
  };
  const verifyNow = async () => {
    setVerified(false);
    const ok = await verify.run(() => api.verifyInboundDomain());
    if (ok) {
      setVerified(true);
      onChanged();
    }
  };
  return (
    <section aria-labelledby="inbound-own-domain" className="subsection">
      <h3 id="inbound-own-domain">Your own inbound domain</h3>
      {current ? (
        <>
          <div className="card-head">
            <code>{current}</code>
            {settings.InboundDomainVerified ? (
              <span className="badge good">Verified</span>
            ) : (
              <span className="badge warn">Not verified: its mail is refused until its MX is found</span>
            )}
            <span className="spacer" />
            {canWrite ? (
              <>
                {settings.InboundDomainVerified ? null : (
                  <button type="button" onClick={verifyNow} disabled={verify.busy}>
                    {verify.busy ? 'Verifying…' : 'Verify now'}
                  </button>
                )}
                <ConfirmButton
                  label="Remove"
                  accessibleLabel={`Remove the inbound domain ${current}`}
                  question={`Remove ${current}? Mail to its addresses is refused from then on.`}
                  confirmLabel="Remove the inbound domain"
                  action={async () => {
                    await api.changeInboundSettings({ InboundDomain: null });
                    onChanged();
                  }}
                />
              </>
            ) : null}
          </div>
          <ErrorNotice error={verify.error} title="Not verified" />
          {verified && settings.InboundDomainVerified ? (
            <p className="notice success" role="status">
              {current} is verified: mail to any address at it is posted to the hook URL.
            </p>
          ) : null}
          <div className="table-scroll">
            <table className="records">
              <caption>DNS record to publish for {current}</caption>
              <thead>
                <tr>
                  <th scope="col">Type</th>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                </tr>
              </thead>
              <tbody>
                {settings.InboundDomainDnsRecords.map((record) => (
                  <tr key={`${record.Type} ${record.Name}`}>
                    <td>{record.Type}</td>
                    <td>
                      <div className="copyable">
                        <code>{record.Name}</code>
                        <CopyButton text={record.Name} label="Copy the record's name" />
                      </div>
                    </td>
                    <td>
                      <div className="copyable">
                        <code className="value">
                          {record.Priority} {record.Value}
                        </code>
                        <CopyButton text={record.Value} label="Copy the record's value" />
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : (
        <p className="muted">
          None: mail reaches you at the inbound address above. With a domain of your own (say reply.example.com), mail
          to any address there is posted too, once its MX record points to us.
        </p>
      )}
      {canWrite ? (
        <form className="inline-form" onSubmit={submit} aria-label="Own inbound domain">
          <div className="field grow">
            <label htmlFor="inbound-domain">{current ? 'Use another domain' : 'Domain'}</label>
            <input
              id="inbound-domain"
              value={domain}
              onChange={(event) => setDomain(event.target.value)}
              placeholder="reply.example.com"
              required
            />
          </div>
          <div className="field actions">
            <button type="submit" className="primary" disabled={change.busy}>
              Use this domain
            </button>
          </div>
          <ErrorNotice error={change.error} title="Domain not set" />
        </form>
      ) : null}
    </section>
  );
}

function Rules({ me }: { me: Me }) {
  const rules = useLoad(() => api.inboundRules(), []);
  const [rule, setRule] = useState('');
  const { busy, error, run } = useAction();
  const canWrite = me.can.manageInbound;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const ok = await run(() => api.addInboundRule(rule.trim()));
    if (ok) {
      setRule('');
      rules.reload();
    }
  };
  return (
    <section className="card" aria-labelledby="inbound-rules">
      <h2 id="inbound-rules">Inbound rules</h2>
      <p className="muted">Mail from these addresses and domains is recorded as Blocked and not posted.</p>
      <Show loaded={rules} what="the inbound rules">
        {(data) =>
          data.InboundRules.length === 0 ? (
            <p className="muted">No rule: every sender&apos;s mail is posted.</p>
          ) : (
            <ul className="rules">
              {data.InboundRules.map((entry) => (
                <li key={entry.ID}>
                  <code>{entry.Rule}</code>{' '}
                  {canWrite ? (
                    <ConfirmButton
                      label="Remove"
                      accessibleLabel={`Remove the rule ${entry.Rule}`}
                      question={`Post mail from ${entry.Rule} again?`}
                      confirmLabel="Remove the rule"
                      action={async () => {
                        await api.removeInboundRule(entry.ID);
                        rules.reload();
                      }}
                    />
                  ) : null}
                </li>
              ))}
            </ul>
          )
        }
      </Show>
      {canWrite ? (
        <form className="inline-form" onSubmit={submit} aria-label="Add an inbound rule">
          <div className="field grow">
            <label htmlFor="inbound-rule">Block an address or a domain</label>
            <input
              id="inbound-rule"
              required
              value={rule}
              onChange={(event) => setRule(event.target.value)}
              placeholder="spammer@example.com or example.com"
            />
          </div>
          <div className="field actions">
            <button type="submit" className="primary" disabled={busy}>
              Add rule
            </button>
          </div>
          <ErrorNotice error={error} title="Rule not added" />
        </form>
      ) : null}
    </section>
  );
}

/** One inbound message: its JSON as posted, the hook's delivery log for it, Retry (Failed) and Bypass (Blocked). */
export function InboundMessagePage({ id, me }: { id: string; me: Me }) {
  const details = useLoad(() => api.inboundMessage(id), [id]);
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <>
      <p>
        <Link to="/inbound">← Inbound</Link>
      </p>
      <Show loaded={details} what="the inbound message">
        {({ message, deliveries }) => (
          <>
            <h1>{message.Subject || '(no subject)'}</h1>
            <section className="card">
              <dl className="fields">
                <dt>Status</dt>
                <dd>
                  <InboundStatus status={message.Status} />
                  {message.BlockedReason ? <span className="muted"> — {message.BlockedReason}</span> : null}
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
                <dd>{message.FromName ? `${message.FromName} <${message.From}>` : message.From}</dd>
                <dt>To</dt>
                <dd>{message.To}</dd>
                <dt>Mailbox hash</dt>
                <dd>{message.MailboxHash || <span className="muted">none</span>}</dd>
              </dl>
              {me.can.manageInbound && (message.Status === 'Failed' || message.Status === 'Blocked') ? (
                <div className="actions start">
                  {me.can.manageInbound && message.Status === 'Failed' ? (
                    <ConfirmButton
                      label="Retry"
                      accessibleLabel="Post this message to the hook URL again"
                      question="Post this message to the hook URL again, now?"
                      confirmLabel="Retry"
                      danger={false}
                      action={async () => {
                        setNotice((await api.retryInbound(message.MessageID)).Message);
                        details.reload();
                      }}
                    />
                  ) : null}
                  {me.can.manageInbound && message.Status === 'Blocked' ? (
                    <ConfirmButton
                      label="Bypass"
                      accessibleLabel="Let this blocked message through"
                      question="Let this message through the inbound rules and post it now?"
                      confirmLabel="Bypass"
                      danger={false}
                      action={async () => {
                        setNotice((await api.bypassInbound(message.MessageID)).Message);
                        details.reload();
                      }}
                    />
                  ) : null}
                </div>
              ) : null}
              {notice ? (
                <p className="notice success" role="status">
                  {notice}
                </p>
              ) : null}
            </section>
            <section className="card" aria-labelledby="inbound-deliveries">
              <h2 id="inbound-deliveries">Hook delivery log</h2>
              {deliveries.length === 0 ? (
                <p className="muted">
                  {message.Status === 'Blocked' ? 'Blocked: not posted.' : 'No attempt yet (or none kept in the log).'}
                </p>
              ) : (
                <div className="table-scroll">
                  <table>
                    <thead>
                      <tr>
                        <th scope="col">When</th>
                        <th scope="col">Attempt</th>
                        <th scope="col">Outcome</th>
                        <th scope="col">HTTP</th>
                        <th scope="col">Time</th>
                        <th scope="col">Answer</th>
                        <th scope="col">Next attempt</th>
                      </tr>
                    </thead>
                    <tbody>
                      {deliveries.map((delivery) => (
                        <tr key={`${delivery.DeliveryID}-${delivery.AttemptedAt}-${delivery.Attempt}`}>
                          <td className="nowrap">
                            <Time at={delivery.AttemptedAt} />
                          </td>
                          <td>
                            {delivery.Attempt}
                            {delivery.Manual ? ' (manual)' : ''}
                          </td>
                          <td>{delivery.Status}</td>
                          <td>{delivery.HttpStatus ?? '—'}</td>
                          <td>{delivery.LatencyMs} ms</td>
                          <td className="wrap">{delivery.Error ?? delivery.Response}</td>
                          <td className="nowrap">
                            {delivery.NextAttemptAt ? <Time at={delivery.NextAttemptAt} /> : '—'}
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
            <section className="card" aria-labelledby="inbound-json">
              <h2 id="inbound-json">
                {message.Status === 'Blocked' ? 'JSON (not posted: blocked)' : 'JSON as posted'}
              </h2>
              <pre className="text-body" tabIndex={0} aria-label="The JSON posted to the hook URL">
                {JSON.stringify(postedJson(message), null, 2)}
              </pre>
            </section>
          </>
        )}
      </Show>
    </>
  );
}

/** The JSON the hook received: the details without ours (Status, BlockedReason, ReceivedAt). */
function postedJson(message: Record<string, unknown>): Record<string, unknown> {
  const { Status: _status, BlockedReason: _reason, ReceivedAt: _received, ...posted } = message;
  return posted;
}

function InboundStatus({ status }: { status: string }) {
  const tone =
    status === 'Processed'
      ? 'good'
      : status === 'Failed' || status === 'Blocked'
        ? 'bad'
        : status === 'Scheduled'
          ? 'warn'
          : '';
  return <span className={`badge ${tone}`}>{status}</span>;
}
