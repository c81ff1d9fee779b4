import { useState, type FormEvent } from 'react';
import { api, ApiFailure } from '../api/client';
import type { Me, SuppressionResults } from '../api/types';
import { ConfirmButton, ErrorNotice, Show, Time, useLoad, useAction } from '../components/common';

const ORIGINS = ['Recipient', 'Customer', 'Admin'] as const;

/** What each reason means, shown on hover. */
const REASONS: Record<string, string> = {
  HardBounce: "The recipient's server refused the address for good.",
  SpamComplaint: 'The recipient marked a message as spam.',
  ManualSuppression: 'Added by hand.',
};

/**
 * A suppression result is per address: a refused one (an invalid address) becomes an error; the
 * server's note on one that went through ("Already suppressed (HardBounce).") is answered.
 */
function refusalOf(results: SuppressionResults): string | null {
  const failed = results.Suppressions.find((result) => result.Status === 'Failed');
  if (failed) throw new ApiFailure(422, null, failed.Message ?? `${failed.EmailAddress} was refused.`);
  return results.Suppressions[0]?.Message ?? null;
}

/** The addresses the organization does not send to: search, add one by hand, remove one the rules allow. */
export function SuppressionsPage({ me }: { me: Me }) {
  const [filters, setFilters] = useState({ email: '', origin: '' });
  const [draft, setDraft] = useState(filters);
  const list = useLoad(() => api.suppressions(filters), [filters.email, filters.origin]);
  const [notice, setNotice] = useState<string | null>(null);
  const canWrite = me.can.manageSuppressions;

  const search = (event: FormEvent) => {
    event.preventDefault();
    const next = { email: draft.email.trim(), origin: draft.origin };
    // The same search again is a fresh look at the list, which the bounces and complaints keep changing.
    if (next.email === filters.email && next.origin === filters.origin) list.reload();
    else setFilters(next);
  };

  return (
    <>
      <h1>Suppressions</h1>
      <p className="muted">
        Messages to these addresses are not sent: they bounced hard, complained, or were added by hand.
      </p>
      {canWrite ? (
        <AddSuppression
          onAdded={(email, note) => {
            setNotice(note ? `${email}: ${note}` : `${email} is suppressed.`);
            list.reload();
          }}
        />
      ) : (
        <p className="notice">Your role ({me.role}) can read suppressions; an admin or a developer can change them.</p>
      )}
      {notice ? (
        <p className="notice success" role="status">
          {notice}
        </p>
      ) : null}
      <form className="card filters" role="search" aria-label="Search suppressions" onSubmit={search}>
        <div className="field">
          <label htmlFor="suppression-email">Email address</label>
          <input
            id="suppression-email"
            type="search"
            value={draft.email}
            onChange={(event) => setDraft({ ...draft, email: event.target.value })}
          />
        </div>
        <div className="field">
          <label htmlFor="suppression-origin">Origin</label>
          <select
            id="suppression-origin"
            value={draft.origin}
            onChange={(event) => setDraft({ ...draft, origin: event.target.value })}
          >
            <option value="">Any</option>
            {ORIGINS.map((origin) => (
              <option key={origin}>{origin}</option>
            ))}
          </select>
        </div>
        <div className="field actions">
          <button type="submit" className="primary">
            Search
          </button>
        </div>
      </form>
      <Show loaded={list} what="suppressions">
        {(data) =>
          data.Suppressions.length === 0 ? (
            <div className="card empty">
              <p>
                {filters.email || filters.origin
                  ? 'No suppression matches.'
                  : 'No suppressed address. Hard bounces and spam complaints add theirs here on their own.'}
              </p>
            </div>
          ) : (
            <div className="table-scroll card flush">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Email address</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Origin</th>
                    <th scope="col">Since</th>
                    {canWrite ? <th scope="col">Actions</th> : null}
                  </tr>
                </thead>
                <tbody>
                  {data.Suppressions.map((suppression) => (
                    <tr key={suppression.EmailAddress}>
                      <td>{suppression.EmailAddress}</td>
                      <td title={REASONS[suppression.SuppressionReason]}>{suppression.SuppressionReason}</td>
                      <td>{suppression.Origin}</td>
                      <td>
                        <Time at={suppression.CreatedAt} />
                      </td>
                      {canWrite ? (
                        <td>
                          <ConfirmButton
                            label="Remove"
                            accessibleLabel={`Remove the suppression of ${suppression.EmailAddress}`}
                            question={`Send to ${suppression.EmailAddress} again?`}
                            confirmLabel="Remove the suppression"
                            action={async () => {
                              refusalOf(await api.unsuppress(suppression.EmailAddress));
                              setNotice(`${suppression.EmailAddress} is no longer suppressed.`);
                              list.reload();
                            }}
                          />
                        </td>
                      ) : null}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Show>
    </>
  );
}

function AddSuppression({ onAdded }: { onAdded: (email: string, note: string | null) => void }) {
  const [email, setEmail] = useState('');
  const { busy, error, run } = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await run(async () => {
      const address = email.trim();
      const note = refusalOf(await api.suppress(address));
      setEmail('');
      onAdded(address, note);
    });
  };
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Add a suppression">
      <div className="field grow">
        <label htmlFor="add-suppression">Suppress an address</label>
        <input
          id="add-suppression"
          type="email"
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
          placeholder="someone@example.com"
        />
      </div>
      <div className="field actions">
        <button type="submit" className="primary" disabled={busy}>
          Add suppression
        </button>
      </div>
      <ErrorNotice error={error} title="Not suppressed" />
    </form>
  );
}
