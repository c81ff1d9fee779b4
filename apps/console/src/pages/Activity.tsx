import { api } from '../api/client';
import { MESSAGE_STATUSES, type MessageFilters } from '../api/types';
import { Pager, Show, Time } from '../components/common';
import { SearchFilters, useSearchedList, type FilterField } from '../components/SearchFilters';
import { Link } from '../router';

const PAGE = 50;

/** The search form's fields, in the order shown: every filter of GET /messages/outbound. */
const FIELDS: readonly FilterField<keyof MessageFilters>[] = [
  { name: 'recipient', label: 'Recipient', kind: 'search', placeholder: 'someone@example.com' },
  { name: 'fromemail', label: 'From', kind: 'search' },
  { name: 'subject', label: 'Subject', kind: 'search' },
  { name: 'tag', label: 'Tag', kind: 'search' },
  { name: 'status', label: 'Status', kind: 'choice', choices: MESSAGE_STATUSES },
  { name: 'fromdate', label: 'From day (UTC)', kind: 'date' },
  { name: 'todate', label: 'To day (UTC)', kind: 'date' },
];
const FILTERS = FIELDS.map((field) => field.name);

/** Every filter of GET /messages/outbound, kept in the address (a search is a link to share), paged. */
export function ActivityPage() {
  const {
    filters,
    offset,
    list: messages,
    go,
  } = useSearchedList(FILTERS, '/activity', (filters: MessageFilters, offset) => api.messages(filters, PAGE, offset));

  return (
    <>
      <h1>Activity</h1>
      <SearchFilters
        label="Search messages"
        idPrefix="filter"
        fields={FIELDS}
        initial={filters}
        onSearch={(next) => go(next, 0)}
        key={JSON.stringify(filters)}
      />
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
