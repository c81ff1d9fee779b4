import { useState } from 'react';
import { api } from '../api/client';
import type { Me } from '../api/types';
import { Pager, Show, Time, useLoad } from '../components/common';

const PAGE = 50;

/** Who did what and when, from the organization's account events (admins only; the server checks it too). */
export function AuditPage({ me }: { me: Me }) {
  const [offset, setOffset] = useState(0);
  const audit = useLoad(() => api.audit(PAGE, offset), [offset]);
  return (
    <>
      <h1>Audit</h1>
      {!me.can.readAudit ? <p className="notice">Only an admin can read the audit log.</p> : null}
      <Show loaded={audit} what="the audit log">
        {(data) =>
          data.entries.length === 0 ? (
            <div className="card empty">
              <p>Nothing recorded yet.</p>
            </div>
          ) : (
            <>
              <div className="table-scroll card flush">
                <table>
                  <caption className="visually-hidden">Account changes, newest first</caption>
                  <thead>
                    <tr>
                      <th scope="col">When</th>
                      <th scope="col">Who</th>
                      <th scope="col">What</th>
                      <th scope="col">On</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.entries.map((entry) => (
                      <tr key={entry.eventId}>
                        <td className="nowrap">
                          <Time at={entry.at} />
                        </td>
                        <td>{entry.actor ?? <span className="muted">not recorded</span>}</td>
                        <td>{entry.action}</td>
                        <td className="wrap">{entry.subject}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              <Pager offset={offset} count={PAGE} total={data.TotalCount} what="entries" onChange={setOffset} />
            </>
          )
        }
      </Show>
    </>
  );
}
