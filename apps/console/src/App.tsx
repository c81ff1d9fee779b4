import { useEffect, useState, type ReactNode } from 'react';
import { api, ApiFailure, useCsrfToken, whenSignedOut } from './api/client';
import type { Me } from './api/types';
import { Centered, ErrorNotice, Loading } from './components/common';
import { Layout } from './components/Layout';
import { ActivityPage } from './pages/Activity';
import { ApiKeysPage } from './pages/ApiKeys';
import { AuditPage } from './pages/Audit';
import { DomainsPage } from './pages/Domains';
import { InboundMessagePage, InboundPage } from './pages/Inbound';
import { MembersPage } from './pages/Members';
import { MessagePage } from './pages/Message';
import { NotFoundPage } from './pages/NotFound';
import { OverviewPage } from './pages/Overview';
import { SignInPage } from './pages/SignIn';
import { SuppressionsPage } from './pages/Suppressions';
import { TemplatePage, TemplatesPage } from './pages/Templates';
import { navigate, useRoute } from './router';

/** The signed-in member, or why there is none: the sign-in page, or the error in words. */
type Session =
  { state: 'loading' } | { state: 'signed-out' } | { state: 'failed'; error: unknown } | { state: 'in'; me: Me };

export function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session>({ state: 'loading' });
  const [round, setRound] = useState(0);

  const signedIn = (me: Me) => {
    useCsrfToken(me.csrfToken);
    setSession({ state: 'in', me });
  };

  useEffect(() => {
    whenSignedOut(() => setSession({ state: 'signed-out' }));
  }, []);

  const onSignInPage = route.path === '/sign-in';
  useEffect(() => {
    if (onSignInPage) return;
    let current = true;
    api.me().then(
      (me) => current && signedIn(me),
      (error: unknown) => {
        if (!current) return;
        if (error instanceof ApiFailure && error.status === 401) setSession({ state: 'signed-out' });
        else setSession({ state: 'failed', error });
      },
    );
    return () => {
      current = false;
    };
  }, [onSignInPage, round]);

  useEffect(() => {
    if (session.state === 'signed-out' && !onSignInPage) {
      const here = location.pathname.replace(/^\/console/, '') + location.search;
      navigate(here === '/' || here === '' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(here)}`, {
        replace: true,
      });
    }
  }, [session.state, onSignInPage]);

  if (onSignInPage) {
    return (
      <SignInPage
        onSignedIn={(me) => {
          signedIn(me);
          const next = route.search.get('next');
          navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/', { replace: true });
        }}
      />
    );
  }
  if (session.state === 'failed') {
    return (
      <Centered title="The console could not start">
        <ErrorNotice error={session.error} />
        <button type="button" onClick={() => setRound((n) => n + 1)}>
          Try again
        </button>
      </Centered>
    );
  }
  if (session.state !== 'in') {
    return (
      <Centered title="Sendline console">
        <Loading what="your session" />
      </Centered>
    );
  }
  const { me } = session;
  return (
    <Layout me={me} path={route.path} onSignedOut={() => setSession({ state: 'signed-out' })}>
      {page(route.path, me)}
    </Layout>
  );
}

function page(path: string, me: Me): ReactNode {
  if (path === '/') return <OverviewPage />;
  if (path === '/activity') return <ActivityPage />;
  const message = /^\/activity\/([^/]+)$/.exec(path);
  if (message) return <MessagePage id={decodeURIComponent(message[1]!)} />;
  if (path === '/suppressions') return <SuppressionsPage me={me} />;
  if (path === '/domains') return <DomainsPage me={me} />;
  if (path === '/developers/api-keys') return <ApiKeysPage me={me} />;
  if (path === '/members') return <MembersPage me={me} />;
  if (path === '/audit') return <AuditPage me={me} />;
  if (path === '/templates') return <TemplatesPage me={me} />;
  if (path === '/templates/new') return <TemplatePage me={me} idOrAlias={null} />;
  const template = /^\/templates\/([^/]+)$/.exec(path);
  if (template) return <TemplatePage me={me} idOrAlias={decodeURIComponent(template[1]!)} />;
  if (path === '/inbound') return <InboundPage me={me} />;
  const inbound = /^\/inbound\/([^/]+)$/.exec(path);
  if (inbound) return <InboundMessagePage id={decodeURIComponent(inbound[1]!)} me={me} />;
  return <NotFoundPage path={path} />;
}
