import { useEffect, useState, type FormEvent } from 'react';
import { api } from '../api/client';
import { markInteractive } from '../interactive';
import type { Me } from '../api/types';
import { Centered, ErrorNotice, Loading, useAction } from '../components/common';

/**
 * The token of a sign-in link (`/console/sign-in#token=…`), taken from the address at once (it leaves the address
 * bar and the history). The last one is kept until its post settles, for a render that asks twice.
 */
let lastToken: string | null = null;
function takeLinkToken(): string | null {
  const token = new URLSearchParams(location.hash.slice(1)).get('token');
  if (token) {
    lastToken = token;
    history.replaceState(null, '', location.pathname + location.search);
  }
  return lastToken;
}

/** Each token is posted once (a link works once), whatever renders twice. */
const sessions = new Map<string, Promise<Me>>();
function openSessionOnce(token: string): Promise<Me> {
  let session = sessions.get(token);
  if (!session) {
    session = api.openSession(token);
    sessions.set(token, session);
    void session
      .finally(() => {
        if (lastToken === token) lastToken = null;
      })
      .catch(() => undefined);
  }
  return session;
}

/**
 * Sign in: enter an email address, then follow the link the mail brings. The link's page posts its token and
 * lands on the page asked for (the overview by default).
 */
export function SignInPage({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [token, setToken] = useState(takeLinkToken);
  const [linkError, setLinkError] = useState<unknown>(undefined);
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState<string | null>(null);
  const { busy, error, run } = useAction();

  // A link opened in this tab while it shows the sign-in page changes only the address's fragment.
  useEffect(() => {
    const onHashChange = () => {
      const next = takeLinkToken();
      if (next) {
        setLinkError(undefined);
        setToken(next);
      }
    };
    window.addEventListener('hashchange', onHashChange);
    return () => window.removeEventListener('hashchange', onHashChange);
  }, []);

  useEffect(() => {
    if (!token) return;
    let current = true;
    openSessionOnce(token).then(
      (me) => current && onSignedIn(me),
      (error: unknown) => current && setLinkError(error),
    );
    return () => {
      current = false;
    };
  }, [token, onSignedIn]);

  const signingIn = token !== null && linkError === undefined;
  useEffect(() => {
    if (!signingIn) markInteractive();
  }, [signingIn]);

  if (signingIn) {
    return (
      <Centered title="Signing you in">
        <Loading what="your session" />
      </Centered>
    );
  }

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    await run(async () => {
      const answer = await api.requestSignInLink(email.trim());
      setSent(answer.Message);
    });
  };

  return (
    <Centered title="Sign in to Sendline">
      {linkError !== undefined ? <ErrorNotice error={linkError} title="This link did not sign you in" /> : null}
      {sent !== null ? (
        <div className="notice success" role="status">
          <h2>Check your inbox</h2>
          <p>{sent}</p>
          <p className="muted">The link works once, for 15 minutes.</p>
          <button type="button" onClick={() => setSent(null)}>
            Use another address
          </button>
        </div>
      ) : (
        <form onSubmit={submit} className="stack">
          <p className="muted">We email you a link that signs you in: no password to remember.</p>
          <label htmlFor="sign-in-email">Email address</label>
          <input
            id="sign-in-email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(event) => setEmail(event.target.value)}
            autoFocus
          />
          <ErrorNotice error={error} />
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Sending…' : 'Email me a sign-in link'}
          </button>
        </form>
      )}
    </Centered>
  );
}
