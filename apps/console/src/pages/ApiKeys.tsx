import { useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { SCOPES, type ApiKeyMode, type IssuedApiKey, type Me, type Scope } from '../api/types';
import { ConfirmButton, CopyButton, ErrorNotice, Show, Time, useLoad, useAction } from '../components/common';

const SCOPE_HELP: Record<Scope, string> = {
  'email:send': 'send messages',
  'email:read': 'read activity, bounces and statistics',
  'domains:read': 'read the sending domains',
  'members:read': 'read the members',
  'webhooks:manage': 'manage webhooks',
  'templates:read': 'read the templates',
  'templates:manage': 'create, edit and delete templates',
};

/** Developers › API keys: issue one (its token shown once), list them, revoke one. */
export function ApiKeysPage({ me }: { me: Me }) {
  const keys = useLoad(() => api.keys(), []);
  const [issued, setIssued] = useState<IssuedApiKey | null>(null);
  const canWrite = me.can.manageKeys;
  return (
    <>
      <h1>API keys</h1>
      <p className="muted">
        Servers send with an API key (<code>Authorization: Bearer …</code> or <code>X-Postmark-Server-Token</code>).
        Test keys accept messages without delivering them.
      </p>
      {issued ? <IssuedToken issued={issued} onDone={() => setIssued(null)} /> : null}
      {canWrite && !issued ? (
        <IssueKey
          me={me}
          onIssued={(key) => {
            setIssued(key);
            keys.reload();
          }}
        />
      ) : null}
      <Show loaded={keys} what="API keys">
        {(data) =>
          data.keys.length === 0 ? (
            <div className="card empty">
              <p>
                No API key yet.{' '}
                {canWrite ? 'Create one above to send your first message.' : 'Ask an admin or a developer for one.'}
              </p>
            </div>
          ) : (
            <div className="table-scroll card flush">
              <table>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key</th>
                    <th scope="col">Mode</th>
                    <th scope="col">Scopes</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">State</th>
                    {canWrite ? <th scope="col">Actions</th> : null}
                  </tr>
                </thead>
                <tbody>
                  {data.keys.map((key) => (
                    <tr key={key.id}>
                      <td>{key.name}</td>
                      <td>
                        <code>{key.prefix}…</code>
                      </td>
                      <td>
                        <span className={`badge ${key.mode === 'live' ? 'good' : ''}`}>{key.mode}</span>
                      </td>
                      <td className="wrap">{key.scopes.join(', ')}</td>
                      <td>
                        <Time at={key.issuedAt} />
                      </td>
                      <td>
                        {key.lastUsedAt === null ? <span className="muted">never</span> : <Time at={key.lastUsedAt} />}
                      </td>
                      <td>
                        {key.revokedAt === null ? (
                          'active'
                        ) : (
                          <span className="badge bad">
                            revoked <Time at={key.revokedAt} />
                          </span>
                        )}
                      </td>
                      {canWrite ? (
                        <td>
                          {key.revokedAt === null ? (
                            <ConfirmButton
                              label="Revoke"
                              accessibleLabel={`Revoke the key ${key.name} (${key.prefix})`}
                              question={`Revoke “${key.name}” (${key.prefix}…)? Every request with it is refused from now on; this cannot be undone.`}
                              confirmLabel="Revoke the key"
                              action={async () => {
                                await api.revokeKey(key.id);
                                keys.reload();
                              }}
                            />
                          ) : null}
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

function IssueKey({ me, onIssued }: { me: Me; onIssued: (key: IssuedApiKey) => void }) {
  const [name, setName] = useState('');
  const [mode, setMode] = useState<ApiKeyMode>('live');
  const [scopes, setScopes] = useState<Set<Scope>>(new Set(['email:send']));
  const { busy, error, run } = useAction();
  const everyScope = scopes.size === SCOPES.length;
  const toggle = (scope: Scope, on: boolean) => {
    const next = new Set(scopes);
    if (on) next.add(scope);
    else next.delete(scope);
    setScopes(next);
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await run(async () => {
      const chosen = SCOPES.filter((scope) => scopes.has(scope));
      onIssued(await api.issueKey({ name: name.trim(), mode, scopes: chosen }));
      setName('');
    });
  };
  return (
    <form className="card stack" onSubmit={submit} aria-labelledby="issue-key-title">
      <h2 id="issue-key-title">Create an API key</h2>
      <div className="row">
        <div className="field grow">
          <label htmlFor="key-name">Name</label>
          <input
            id="key-name"
            required
            maxLength={100}
            value={name}
            onChange={(event) => setName(event.target.value)}
            placeholder="Production web server"
          />
        </div>
        <div className="field">
          <label htmlFor="key-mode">Mode</label>
          <select id="key-mode" value={mode} onChange={(event) => setMode(event.target.value as ApiKeyMode)}>
            <option value="live">live: delivers messages</option>
            <option value="test">test: accepts, never delivers</option>
          </select>
        </div>
      </div>
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map((scope) => (
          <label key={scope} className="inline">
            <input
              type="checkbox"
              name="scope"
              value={scope}
              checked={scopes.has(scope)}
              onChange={(event) => toggle(scope, event.target.checked)}
            />{' '}
            <code>{scope}</code> <span className="muted">{SCOPE_HELP[scope]}</span>
          </label>
        ))}
      </fieldset>
      {everyScope && mode === 'live' && !me.can.issueAllScopesLiveKeys ? (
        <p className="notice">Only an admin can create a live key with every scope: leave one out or ask an admin.</p>
      ) : null}
      <ErrorNotice error={error} title="Not created" />
      <div>
        <button type="submit" className="primary" disabled={busy || scopes.size === 0}>
          Create key
        </button>
      </div>
    </form>
  );
}

function IssuedToken({ issued, onDone }: { issued: IssuedApiKey; onDone: () => void }) {
  return (
    <section className="card highlight" aria-labelledby="issued-title" role="status">
      <h2 id="issued-title">Key “{issued.name}” created</h2>
      <p>
        Copy it now: <strong>this is the only time it is shown</strong>. Only its hash is kept; a lost key is revoked
        and replaced.
      </p>
      <div className="copyable tight">
        <code className="token" data-testid="issued-token">
          {issued.token}
        </code>
        <CopyButton text={issued.token} label="Copy the new API key" />
      </div>
      <p>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </p>
    </section>
  );
}
