import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import type { DnsRecord, DomainSummary, DomainVerification, Me } from '../api/types';
import { ConfirmButton, CopyButton, ErrorNotice, Show, Time, useLoad, useAction } from '../components/common';

const PURPOSE: Record<DnsRecord['purpose'], string> = {
  ownership: 'Ownership',
  mx: 'MX (bounces come back here)',
  spf: 'SPF',
  dkim: 'DKIM signature',
  dmarc: 'DMARC',
};

/** The sending domains: add one, publish its five records, verify it, remove it. */
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
  const { busy, error, run } = useAction();
  const domain = verification?.domain ?? initial;
  const verify = async () => {
    // The server says what it found at the ownership record's name (nothing, or other values).
    await run(async () => {
      setVerification(await api.verifyDomain(domain.name));
    });
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
        <span className="muted">
          added <Time at={domain.addedAt} />
        </span>
        <span className="spacer" />
        {canWrite ? (
          <>
            <button type="button" onClick={verify} disabled={busy} aria-label={`Verify ${domain.name} now`}>
              {busy ? 'Verifying…' : 'Verify now'}
            </button>
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
      {verification ? <VerificationNotice verification={verification} /> : null}
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
                <td className="nowrap">
                  <RecordState record={record} domain={domain} checked={verification !== null || error !== undefined} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

/** Only the ownership record is checked by "verify now"; the others are the sender's to publish. */
function RecordState({ record, domain, checked }: { record: DnsRecord; domain: DomainSummary; checked: boolean }) {
  if (record.purpose !== 'ownership') return <span className="muted">publish it</span>;
  if (domain.verified) return <span className="badge good">found</span>;
  if (checked) return <span className="badge bad">not found</span>;
  return <span className="badge warn">not checked yet</span>;
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
