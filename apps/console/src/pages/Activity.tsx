import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { MESSAGE_STATUSES, type MessageFilters } from '../api/types';
import { Pager, Show, Time, useLoad } from '../components/common';
import { Link, navigate, useRoute } from '../router';

const PAGE = 50;
const FILTERS = ['recipient', 'fromemail', 'tag', 'status', 'subject', 'fromdate', 'todate'] as const;

/** Every filter of GET /messages/outbound, kept in the address (a search is a link to share), paged. */
export function ActivityPage() {
  const { search } = useRoute();
  const filters: MessageFilters = {};
  for (const name of FILTERS) {
    const value = search.get(name);
    if (value) filters[name] = value;
  }
  const offset = Math.max(0, Number(search.get('offset') ?? 0) || 0);
  const key = JSON.stringify([filters, offset]);
  const messages = useLoad(() => api.messages(filters, PAGE, offset), [key]);

  const go = (next: MessageFilters, nextOffset: number) => {
    const params = new URLSearchParams();
    for (const name of FILTERS) if (next[name]) params.set(name, next[name]!);
    if (nextOffset > 0) params.set('offset', String(nextOffset));
    const text = params.toString();
    // The same search again is a fresh look: the address does not change, so the page is read again.
    if (JSON.stringify([next, nextOffset]) === key) messages.reload();
    else navigate(`/activity${text ? `?${text}` : ''}`);
  };

  return (
    <>
      <h1>Activity</h1>
      <Filters initial={filters} onSearch={(next) => go(next, 0)} key={JSON.stringify(filters)} />
      <Show loaded={messages} what="messages">
        {(data) =>
          data.Messages.length === 0 ? (
            <div className="card empty">
              <p>
                {Object.keys(filters).length > 0
                  ? 'No message matches these filters. Widen the dates or clear a filter.'
                  : 'No message in the last 30 days. Send one with an API key (Developers › API keys) and it shows here within seconds.'}
              </p>
            </div>
          ) : (
            <>
              <div className="table-scroll card flush">
                <table aria-busy={messages.loading}>
                  <caption className="visually-hidden">Messages, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">Received</th>
                      <th scope="col">Subject</th>
                      <th scope="col">From</th>
                      <th scope="col">Recipients</th>
                      <th scope="col">Tag</th>
                      <th scope="col">Status</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.Messages.map((message) => (
                      <tr key={message.MessageID}>
                        <td className="nowrap">
                          <Time at={message.ReceivedAt} />
                        </td>
                        <td>
                          <Link to={`/activity/${encodeURIComponent(message.MessageID)}`}>
                            {message.Subject || '(no subject)'}
                          </Link>
                        </td>
                        <td>{message.From}</td>
                        <td className="wrap">{message.Recipients.join(', ')}</td>
                        <td>{message.Tag}</td>
                        <td>
                          <StatusBadge status={message.Status} />
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
                what="messages"
                onChange={(next) => go(filters, next)}
              />
            </>
          )
        }
      </Show>
    </>
  );
}

export function StatusBadge({ status }: { status: string }) {
  const tone =
    status === 'Delivered'
      ? 'good'
      : status === 'Bounced' || status === 'Rejected'
        ? 'bad'
        : status === 'Deferred' || status === 'PartiallyDelivered'
          ? 'warn'
          : '';
  return <span className={`badge ${tone}`}>{status}</span>;
}

function Filters({ initial, onSearch }: { initial: MessageFilters; onSearch: (filters: MessageFilters) => void }) {
  const [draft, setDraft] = useState<MessageFilters>(initial);
  const field = (name: keyof MessageFilters) => ({
    id: `filter-${name}`,
    name,
    value: draft[name] ?? '',
    onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed: MessageFilters = {};
    for (const name of FILTERS) {
      const value = draft[name]?.trim();
      if (value) trimmed[name] = value;
    }
    onSearch(trimmed);
  };
  return (
    <form className="card filters" onSubmit={submit} role="search" aria-label="Search messages">
      <div className="field">
        <label htmlFor="filter-recipient">Recipient</label>
        <input type="search" {...field('recipient')} placeholder="someone@example.com" />
      </div>
      <div className="field">
        <label htmlFor="filter-fromemail">From</label>
        <input type="search" {...field('fromemail')} />
      </div>
      <div className="field">
        <label htmlFor="filter-subject">Subject</label>
        <input type="search" {...field('subject')} />
      </div>
      <div className="field">
        <label htmlFor="filter-tag">Tag</label>
        <input type="search" {...field('tag')} />
      </div>
      <div className="field">
        <label htmlFor="filter-status">Status</label>
        <select {...field('status')}>
          <option value="">Any</option>
          {MESSAGE_STATUSES.map((status) => (
            <option key={status} value={status.toLowerCase()}>
              {status}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="filter-fromdate">From day (UTC)</label>
        <input type="date" {...field('fromdate')} />
      </div>
      <div className="field">
        <label htmlFor="filter-todate">To day (UTC)</label>
        <input type="date" {...field('todate')} />
      </div>
      <div className="field actions">
        <button type="submit" className="primary">
          Search
        </button>
        <button
          type="button"
          onClick={() => {
            setDraft({});
            onSearch({});
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
