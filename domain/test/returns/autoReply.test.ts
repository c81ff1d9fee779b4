import { describe, expect, it } from 'vitest';
import { isAutomaticReply } from '../../src/returns';

const headers = (fields: Record<string, string>) => Object.entries(fields).map(([name, value]) => ({ name, value }));

describe('isAutomaticReply', () => {
  describe('by RFC 3834', () => {
    it('Auto-Submitted: auto-replied is one', () => {
      expect(isAutomaticReply(headers({ 'Auto-Submitted': 'auto-replied' }))).toBe(true);
    });

    it('with a comment or parameters, whatever the case', () => {
      expect(
        isAutomaticReply(headers({ 'auto-submitted': 'Auto-Replied (vacation); owner-email=bob@example.org' })),
      ).toBe(true);
    });

    it('Auto-Submitted: no is not, whatever the subject or the other markers say', () => {
      expect(
        isAutomaticReply(headers({ 'Auto-Submitted': 'no', 'X-Autoreply': 'yes', Subject: 'Out of Office: x' })),
      ).toBe(false);
    });

    it('Auto-Submitted: auto-generated alone is not (a notice, not a reply)', () => {
      expect(isAutomaticReply(headers({ 'Auto-Submitted': 'auto-generated', Subject: 'Your weekly digest' }))).toBe(
        false,
      );
    });
  });

  describe('by the markers autoresponders write', () => {
    it.each([
      ['X-Autoreply: yes', { 'X-Autoreply': 'yes' }],
      ['X-Autorespond with any value', { 'X-Autorespond': 'Vacation' }],
      ['Precedence: auto_reply', { Precedence: 'auto_reply' }],
    ])('%s is one', (_, fields) => {
      expect(isAutomaticReply(headers(fields))).toBe(true);
    });

    it.each([
      ['X-Autoreply: no', { 'X-Autoreply': 'no' }],
      ['X-Autorespond: false', { 'X-Autorespond': 'false' }],
      ['Precedence: bulk', { Precedence: 'bulk' }],
      ['Precedence: junk', { Precedence: 'junk' }],
    ])('%s is not', (_, fields) => {
      expect(isAutomaticReply(headers(fields))).toBe(false);
    });
  });

  describe('by the subject, only when it starts with an out-of-office phrase', () => {
    it.each([
      'Out of Office: Your receipt',
      'Out of the office',
      'Out of Office AutoReply: Your receipt',
      'Automatic reply: Your receipt',
      'AutoReply: Your receipt',
      'Auto-Response: Your receipt',
      'Abwesenheitsnotiz: Ihre Rechnung',
      'Automatische Antwort: Ihre Rechnung',
      'Réponse automatique : Votre reçu',
      'Respuesta automática: Su recibo',
      'Risposta automatica: La sua ricevuta',
      'Automatisch antwoord: Uw bon',
    ])('%j is one (even with Auto-Submitted: auto-generated, as Exchange writes it)', (subject) => {
      expect(isAutomaticReply(headers({ Subject: subject }))).toBe(true);
      expect(isAutomaticReply(headers({ Subject: subject, 'Auto-Submitted': 'auto-generated' }))).toBe(true);
    });

    it.each([
      'Re: out of office next week?',
      'Your receipt',
      'Out of office supplies',
      'Automatic replying is broken',
      'Fwd: Automatic reply: Your receipt',
    ])('%j is not', (subject) => {
      expect(isAutomaticReply(headers({ Subject: subject }))).toBe(false);
    });
  });

  it('a message without headers is not', () => {
    expect(isAutomaticReply([])).toBe(false);
  });
});
