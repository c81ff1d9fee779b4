import { api } from '../api/client';
import type { Allowance, Problem, ProblemKind } from '../api/types';
import { Show, Time, useLoad } from '../components/common';
import { DailyChart } from '../components/DailyChart';
import { Link } from '../router';

const KIND: Record<ProblemKind, string> = {
  HardBounce: 'Hard bounce',
  SoftBounce: 'Soft bounce',
  PolicyRejected: 'Refused by policy',
  SpamComplaint: 'Spam complaint',
  DeadLetter: 'Dead letter',
};

/** This month's allowance, 30 days of traffic, and the latest problems. */
export function OverviewPage() {
  const overview = useLoad(() => api.overview(), []);
  return (
    <>
      <h1>Overview</h1>
      <Show loaded={overview} what="the overview">
        {(data) => (
          <>
            <AllowanceCard allowance={data.allowance} />
            <section className="card">
              <h2>Last 30 days</h2>
              <DailyChart days={data.days} />
            </section>
            <section className="card">
              <h2>Recent problems</h2>
              <Problems problems={data.problems} />
            </section>
          </>
        )}
      </Show>
    </>
  );
}

function AllowanceCard({ allowance }: { allowance: Allowance }) {
  const { used, limit, period } = allowance;
  const left = limit === null ? null : Math.max(0, limit - used);
  return (
    <section className="card" aria-labelledby="allowance-title">
      <h2 id="allowance-title">Allowance for {period}</h2>
      <dl className="figures">
        <div>
          <dt>Used</dt>
          <dd>{used.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Left</dt>
          <dd>{left === null ? 'Unlimited' : left.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Monthly limit</dt>
          <dd>{limit === null ? 'None' : limit.toLocaleString()}</dd>
        </div>
      </dl>
      {limit !== null ? (
        <progress max={limit} value={Math.min(used, limit)} aria-label={`${used} of ${limit} messages used`} />
      ) : null}
    </section>
  );
}

function Problems({ problems }: { problems: Problem[] }) {
  if (problems.length === 0) {
    return <p className="muted">No bounces, policy rejections, spam complaints or dead letters lately.</p>;
  }
  return (
    <div className="table-scroll">
      <table>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Recipient</th>
            <th scope="col">Message</th>
            <th scope="col">Receiving server's answer</th>
          </tr>
        </thead>
        <tbody>
          {problems.map((problem, index) => (
            <tr key={`${problem.messageId}-${problem.recipient}-${index}`}>
              <td>
                <Time at={problem.at} />
              </td>
              <td>
                <span className={`badge ${problem.kind === 'SoftBounce' ? 'warn' : 'bad'}`}>{KIND[problem.kind]}</span>
              </td>
              <td>{problem.recipient}</td>
              <td>
                {problem.messageId ? (
                  <Link to={`/activity/${encodeURIComponent(problem.messageId)}`}>
                    {problem.subject || '(no subject)'}
                  </Link>
                ) : (
                  problem.subject
                )}
              </td>
              <td className="wrap">{problem.detail}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
