import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { DnsRecord, DomainSummary, DomainVerification, Me, ReturnPathVerification } from '../api/types';
import { ConfirmButton, CopyButton, ErrorNotice, Show, Time, useLoad, useAction } from '../components/common';

const PURPOSE: Record<DnsRecord['purpose'], string> = {
  ownership: 'Ownership',
  mx: 'Return path MX (bounces come back here)',
  spf: 'Return path SPF',
  dkim: 'DKIM signature',
  dmarc: 'DMARC',
};

/** The sending domains: add one, publish its five records, verify it and its return path, remove it. */
export function DomainsPage({ me }: { me: Me }) {
  const domains = useLoad(() => api.domains(), []);
  const canWrite = me.can.manageDomains;
  return (
    <>
      <h1>Domains</h1>
      {canWrite ? <AddDomain onAdded={domains.reload} /> : null}
      <Show loaded={domains} what="domains">
        {(data) =>
          data.domains.length === 0 ? (
            <div className="card empty">
              <h2>No sending domain yet</h2>
              <p>Messages are sent from addresses of a domain the organization owns. To add one:</p>
              <ol>
                <li>{canWrite ? 'Enter its name above and press “Add domain”.' : 'Ask an admin to add it here.'}</li>
                <li>Publish the five DNS records it shows at your DNS host.</li>
                <li>Press “Verify now”: once the ownership record is found, you can send from the domain.</li>
                <li>
                  Press “Verify return path”: once its MX and SPF records are found, bounces come back under your domain
                  and SPF aligns with your From address for DMARC.
                </li>
              </ol>
            </div>
          ) : (
            data.domains.map((domain) => (
              <DomainCard key={domain.name} domain={domain} canWrite={canWrite} onChanged={domains.reload} />
            ))
          )
        }
      </Show>
    </>
  );
}

function AddDomain({ onAdded }: { onAdded: () => void }) {
  const [name, setName] = useState('');
  const { busy, error, run } = useAction();
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await run(async () => {
      await api.addDomain(name.trim());
      setName('');
      onAdded();
    });
  };
  return (
    <form className="card inline-form" onSubmit={submit} aria-label="Add a domain">
      <div className="field grow">
        <label htmlFor="domain-name">Domain name</label>
        <input
          id="domain-name"
          required
          value={name}
          onChange={(event) => setName(event.target.value)}
          placeholder="mail.example.com"
          autoComplete="off"
        />
      </div>
      <div className="field actions">
        <button type="submit" className="primary" disabled={busy}>
          Add domain
        </button>
      </div>
      <ErrorNotice error={error} title="Not added" />
    </form>
  );
}

function DomainCard({
  domain: initial,
  canWrite,
  onChanged,
}: {
  domain: DomainSummary;
  canWrite: boolean;
  onChanged: () => void;
}) {
  const [verification, setVerification] = useState<DomainVerification | null>(null);
  const [returnPathCheck, setReturnPathCheck] = useState<ReturnPathVerification | null>(null);
  const [latest, setLatest] = useState<DomainSummary | null>(null);
  const { busy, error, run } = useAction();
  const returnPathAction = useAction();
  const domain = latest ?? initial;
  const verify = async () => {
    // The server says what it found at the ownership record's name (nothing, or other values).
    await run(async () => {
      const result = await api.verifyDomain(domain.name);
      setVerification(result);
      setLatest(result.domain);
    });
  };
  const verifyReturnPath = async () => {
    await returnPathAction.run(async () => {
      const result = await api.verifyReturnPath(domain.name);
      setReturnPathCheck(result);
      setLatest(result.domain);
    });
  };
  const returnPath = domain.returnPath;
  const checked = {
    ownership: verification !== null || error !== undefined,
    returnPath: returnPathCheck !== null || returnPathAction.error !== undefined,
  };
  const headingId = `domain-${domain.name}`;
  return (
    <section className="card" aria-labelledby={headingId}>
      <div className="card-head">
        <h2 id={headingId}>{domain.name}</h2>
        {domain.verified ? (
          <span className="badge good">
            Verified <Time at={domain.verifiedAt} />
          </span>
        ) : (
          <span className="badge warn">Not verified</span>
        )}
        <ReturnPathBadge domain={domain} />
        <span className="muted">
          added <Time at={domain.addedAt} />
        </span>
        <span className="spacer" />
        {canWrite ? (
          <>
            <button type="button" onClick={verify} disabled={busy} aria-label={`Verify ${domain.name} now`}>
              {busy ? 'Verifying…' : 'Verify now'}
            </button>
            {returnPath && !returnPath.verified ? (
              <button
                type="button"
                onClick={verifyReturnPath}
                disabled={returnPathAction.busy}
                aria-label={`Verify the return path of ${domain.name}`}
              >
                {returnPathAction.busy ? 'Verifying…' : 'Verify return path'}
              </button>
            ) : null}
            <ConfirmButton
              label="Remove"
              accessibleLabel={`Remove the domain ${domain.name}`}
              question={`Remove ${domain.name}? Messages from its addresses are refused from then on.`}
              confirmLabel="Remove the domain"
              action={async () => {
                await api.removeDomain(domain.name);
                onChanged();
              }}
            />
          </>
        ) : null}
      </div>
      <ErrorNotice error={error} title="Not verified" />
      <ErrorNotice error={returnPathAction.error} title="Return path not verified" />
      {verification ? <VerificationNotice verification={verification} /> : null}
      {returnPathCheck?.domain.returnPath?.verified ? (
        <div className="notice success" role="status">
          <p>
            {returnPathCheck.alreadyVerified
              ? `The return path ${returnPathCheck.domain.returnPath.host} was already verified.`
              : `The return path ${returnPathCheck.domain.returnPath.host} is verified: bounces of mail from ${domain.name} come back under it.`}
          </p>
        </div>
      ) : null}
      {returnPath ? null : (
        <p className="notice" role="note">
          {domain.name} was added before return paths: until the service gives it one, its mail is sent with the
          service’s own return path (bounces still come back to the service).
        </p>
      )}
      <div className="table-scroll">
        <table className="records">
          <caption>DNS records to publish for {domain.name}</caption>
          <thead>
            <tr>
              <th scope="col">Purpose</th>
              <th scope="col">Type</th>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {domain.dnsRecords.map((record) => (
              <tr key={`${record.purpose}`} data-purpose={record.purpose}>
                <td>{PURPOSE[record.purpose]}</td>
                <RecordCells record={record} />
                <td className="nowrap">
                  <RecordState record={record} domain={domain} checked={checked} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {domain.dnsRecordsToRemove.length > 0 ? (
        <div className="table-scroll">
          <table className="records" data-records="remove">
            <caption>
              Records to remove: earlier instructions asked for this MX on {domain.name} itself, which takes the
              domain’s incoming mail. Remove only this one; keep your own MX records.
            </caption>
            <thead>
              <tr>
                <th scope="col">Purpose</th>
                <th scope="col">Type</th>
                <th scope="col">Name</th>
                <th scope="col">Value</th>
              </tr>
            </thead>
            <tbody>
              {domain.dnsRecordsToRemove.map((record) => (
                <tr key={`${record.type} ${record.name}`} data-purpose={`remove-${record.purpose}`}>
                  <td>Old MX (remove)</td>
                  <RecordCells record={record} />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

/** A record's type, name and value, each with its copy button. */
function RecordCells({ record }: { record: DnsRecord }) {
  return (
    <>
      <td>{record.type}</td>
      <td>
        <div className="copyable">
          <code>{record.name}</code>
          <CopyButton text={record.name} label={`Copy the name of the ${record.purpose} record`} />
        </div>
      </td>
      <td>
        <div className="copyable">
          <code className="value">
            {record.priority !== undefined ? `${record.priority} ` : ''}
            {record.value}
          </code>
          <CopyButton text={record.value} label={`Copy the value of the ${record.purpose} record`} />
        </div>
      </td>
    </>
  );
}

function ReturnPathBadge({ domain }: { domain: DomainSummary }) {
  const returnPath = domain.returnPath;
  if (!returnPath) return <span className="badge warn">No return path yet</span>;
  if (returnPath.verified) {
    return (
      <span className="badge good" title={returnPath.host}>
        Return path verified <Time at={returnPath.verifiedAt} />
      </span>
    );
  }
  return (
    <span className="badge warn" title={returnPath.host}>
      Return path not verified
    </span>
  );
}

/**
 * "Verify now" checks the ownership record, "Verify return path" the return path's MX and SPF records; DKIM and
 * DMARC are the sender's to publish.
 */
function RecordState({
  record,
  domain,
  checked,
}: {
  record: DnsRecord;
  domain: DomainSummary;
  checked: { ownership: boolean; returnPath: boolean };
}) {
  if (record.purpose === 'ownership') {
    if (domain.verified) return <span className="badge good">found</span>;
    if (checked.ownership) return <span className="badge bad">not found</span>;
    return <span className="badge warn">not checked yet</span>;
  }
  if (record.purpose === 'mx' || record.purpose === 'spf') {
    if (domain.returnPath?.verified) return <span className="badge good">found</span>;
    if (checked.returnPath) return <span className="badge bad">not as asked</span>;
    return <span className="badge warn">not checked yet</span>;
  }
  return <span className="muted">publish it</span>;
}

function VerificationNotice({ verification }: { verification: DomainVerification }) {
  const { domain, alreadyVerified, found } = verification;
  if (!domain.verified) return null;
  return (
    <div className="notice success" role="status">
      <p>
        {alreadyVerified ? `${domain.name} was already verified.` : `${domain.name} is verified: you can send from it.`}
      </p>
      {found.length > 0 ? (
        <p>
          Found at <code>{domain.dnsRecords[0]?.name}</code>:{' '}
          {found.map((value) => (
            <code key={value}>{value} </code>
          ))}
        </p>
      ) : null}
    </div>
  );
}
