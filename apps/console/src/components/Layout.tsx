import { useState, type ReactNode } from 'react';
import { api } from '../api/client';
import type { Me } from '../api/types';
import { Link, navigate } from '../router';
import { ErrorNotice } from './common';

interface Section {
  to: string;
  label: string;
  /** Other paths that belong to the section (a message's page belongs to Activity). */
  prefix?: string;
  shown?: (me: Me) => boolean;
}

const SECTIONS: Section[] = [
  { to: '/', label: 'Overview' },
  { to: '/activity', label: 'Activity', prefix: '/activity/' },
  { to: '/suppressions', label: 'Suppressions' },
  { to: '/inbound', label: 'Inbound', prefix: '/inbound/' },
  { to: '/domains', label: 'Domains' },
  { to: '/templates', label: 'Templates', prefix: '/templates/' },
  { to: '/developers/api-keys', label: 'Developers › API keys' },
  { to: '/members', label: 'Members' },
  { to: '/audit', label: 'Audit', shown: (me) => me.can.readAudit },
];

/** The frame of every signed-in page: skip link, organization, member, sign out, the sections. */
export function Layout({
  me,
  path,
  children,
  onSignedOut,
}: {
  me: Me;
  path: string;
  children: ReactNode;
  onSignedOut: () => void;
}) {
  const [error, setError] = useState<unknown>(undefined);
  const signOut = async () => {
    try {
      await api.signOut();
      onSignedOut();
      navigate('/sign-in', { replace: true });
    } catch (failure) {
      setError(failure);
    }
  };
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to the page
      </a>
      <header className="top">
        <span className="brand">Sendline</span>
        <span className="organization" title={`organization ${me.organization.id}`}>
          {me.organization.name}
        </span>
        <span className="member">
          {me.email} <span className="badge">{me.role}</span>
        </span>
        <button type="button" className="small" onClick={signOut}>
          Sign out
        </button>
      </header>
      <ErrorNotice error={error} title="Could not sign out" />
      <div className="body">
        <nav className="sections" aria-label="Console sections">
          <ul>
            {SECTIONS.filter((section) => !section.shown || section.shown(me)).map((section) => {
              const current = path === section.to || (section.prefix !== undefined && path.startsWith(section.prefix));
              return (
                <li key={section.to}>
                  <Link to={section.to} aria-current={current ? 'page' : undefined}>
                    {section.label}
                  </Link>
                </li>
              );
            })}
          </ul>
        </nav>
        <main id="main" tabIndex={-1}>
          {children}
        </main>
      </div>
    </div>
  );
}
