/**
 * BENCH_PEER=postfix: the classic MTA as a reference in bench:e2e — Debian's Postfix with OpenDKIM (the sending
 * domain's own RSA-2048 key, relaxed/relaxed), installed with apt-get when missing (we run as root), configured by
 * the benchmark for loopback only (smtpd on 127.0.0.1, relaying everything to the bench's mail server with
 * opportunistic STARTTLS, as the sender does), fed the same messages over SMTP, and stopped afterwards.
 *
 * Figures: messages/s from the first message handed to Postfix to the mail server having them all; CPU per message
 * of Postfix's processes and OpenDKIM's (from /proc), the client feeding it left out.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { envelopeOf, RelayRouter, SmtpDelivery } from '@sendline/infra';
import type { MessageAcceptedData } from '@sendline/domain';
import { Limiter } from '@sendline/sender';
import type { ReferenceRow } from './references';

const SMTPD_PORT = 2526;
const MILTER_PORT = 8891;
const POSTFIX_PROCESSES = new Set([
  'master',
  'smtpd',
  'smtp',
  'cleanup',
  'qmgr',
  'trivial-rewrite',
  'tlsmgr',
  'anvil',
  'postlogd',
  'bounce',
  'scache',
  'pickup',
  'opendkim',
]);

const run = (command: string, args: string[], env: NodeJS.ProcessEnv = process.env) =>
  execFileSync(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** Debian's packages, installed once; no service started by the install (policy-rc.d says no). */
function install(): void {
  if (existsSync('/usr/sbin/postfix') && existsSync('/usr/sbin/opendkim')) return;
  const policy = '/usr/sbin/policy-rc.d';
  const hadPolicy = existsSync(policy);
  if (!hadPolicy) writeFileSync(policy, '#!/bin/sh\nexit 101\n', { mode: 0o755 });
  try {
    execFileSync('debconf-set-selections', { input: 'postfix postfix/main_mailer_type select No configuration\n' });
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    run('apt-get', ['install', '-y', '-q', '--no-install-recommends', 'postfix', 'opendkim'], env);
  } finally {
    if (!hadPolicy) rmSync(policy);
  }
}

/** CPU ms of every Postfix and OpenDKIM process alive now, by pid. */
function cpuByPid(): Map<number, number> {
  const cpu = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (!POSTFIX_PROCESSES.has(name)) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      cpu.set(Number(entry), ((Number(fields[11]) + Number(fields[12])) * 1000) / 100);
    } catch {
      // gone meanwhile
    }
  }
  return cpu;
}

/** Stops what the benchmark started: Postfix (`postfix stop`), then OpenDKIM by the pid it wrote. */
function stop(): void {
  try {
    // What it has not relayed goes too: nothing is left to go out to the next run's mail server. (postsuper is run
    // while Postfix is: with maillog_file set, it logs through postlogd, and fails without it.)
    run('postsuper', ['-d', 'ALL']);
  } catch {
    // not running, or nothing queued
  }
  try {
    run('postfix', ['stop']);
  } catch {
    // not running
  }
  try {
    const pid = Number(readFileSync('/run/opendkim/bench.pid', 'utf8').trim());
    if (pid > 0) process.kill(pid, 'SIGTERM');
  } catch {
    // not running
  }
}

export interface PostfixPeerOptions {
  /** The bench's mail server. */
  relayPort: number;
  domain: string;
  selector: string;
  privateKeyPem: string;
  messages: readonly { message: MessageAcceptedData; raw: Buffer }[];
  /**
   * How many messages relayed by Postfix the mail server has received so far. Counted apart from everything else it
   * receives: a count of all its messages, which reaches the benchmark every 250 ms, was read stale at the start and
   * took in the pre-signed reference's last messages as Postfix's (3,002–3,047 "relayed" for 3,000, ~25% high).
   */
  relayed: () => number;
  concurrency: number;
}

export async function postfixReference(options: PostfixPeerOptions): Promise<ReferenceRow> {
  install();
  mkdirSync('/etc/opendkim', { recursive: true });
  mkdirSync('/run/opendkim', { recursive: true });
  const uid = Number(run('id', ['-u', 'opendkim']).trim());
  const gid = Number(run('id', ['-g', 'opendkim']).trim());
  chownSync('/run/opendkim', uid, gid);
  writeFileSync('/etc/opendkim/bench.private', options.privateKeyPem, { mode: 0o600 });
  chownSync('/etc/opendkim/bench.private', uid, gid);
  writeFileSync(
    '/etc/opendkim/bench.conf',
    [
      'Syslog no',
      'Mode s',
      `Socket inet:${MILTER_PORT}@127.0.0.1`,
      `Domain ${options.domain}`,
      `Selector ${options.selector}`,
      'KeyFile /etc/opendkim/bench.private',
      'Canonicalization relaxed/relaxed',
      'SignatureAlgorithm rsa-sha256',
      'UserID opendkim',
      'PidFile /run/opendkim/bench.pid',
      '',
    ].join('\n'),
  );
  const concurrency = String(options.concurrency);
  const main: Record<string, string> = {
    compatibility_level: '3.6',
    myhostname: 'postfix.bench.sendline.test',
    inet_interfaces: 'loopback-only',
    inet_protocols: 'ipv4',
    mydestination: '',
    alias_maps: '',
    alias_database: '',
    local_transport: 'error:no local delivery',
    relayhost: `[127.0.0.1]:${options.relayPort}`,
    mynetworks: '127.0.0.0/8',
    smtpd_relay_restrictions: 'permit_mynetworks, reject',
    smtp_tls_security_level: 'may',
    smtpd_milters: `inet:127.0.0.1:${MILTER_PORT}`,
    non_smtpd_milters: '$smtpd_milters',
    milter_default_action: 'tempfail',
    default_destination_concurrency_limit: concurrency,
    smtp_destination_concurrency_limit: concurrency,
    initial_destination_concurrency: concurrency,
    default_process_limit: '200',
    smtpd_client_connection_count_limit: '0',
    smtpd_client_message_rate_limit: '0',
    smtputf8_enable: 'no',
    maillog_file: '/var/log/postfix-bench.log',
  };
  // Debian's "No configuration" leaves no main.cf: the benchmark's settings are all there is.
  if (!existsSync('/etc/postfix/main.cf')) writeFileSync('/etc/postfix/main.cf', '');
  run('postconf', ['-e', ...Object.entries(main).map(([name, value]) => `${name}=${value}`)]);
  // smtpd on a loopback port of its own instead of port 25; no chroot (nothing copied into the spool).
  run('postconf', ['-M#', 'smtp/inet']);
  run('postconf', ['-M', `127.0.0.1:${SMTPD_PORT}/inet=127.0.0.1:${SMTPD_PORT} inet n - n - - smtpd`]);
  run('postconf', ['-F', '*/*/chroot=n']);

  run('opendkim', ['-x', '/etc/opendkim/bench.conf']);
  try {
    run('postfix', ['start']);
    // Messages an earlier run left queued (one that ended before its stop() ran) would go to this run's mail server:
    // counted as this reference's, and signed with that run's key, which this mail server does not know.
    run('postsuper', ['-d', 'ALL']);
  } catch (error) {
    stop();
    throw error;
  }
  const delivery = new SmtpDelivery(new RelayRouter('127.0.0.1', SMTPD_PORT), {
    heloName: 'bench.sendline.test',
    poolSize: options.concurrency,
  });
  try {
    const limiter = new Limiter(options.concurrency);
    const before = options.relayed();
    const cpuBefore = cpuByPid();
    const cpuLast = new Map(cpuBefore);
    const sample = setInterval(() => {
      for (const [pid, ms] of cpuByPid()) cpuLast.set(pid, ms);
    }, 500);
    const started = performance.now();
    const results = await Promise.all(
      options.messages.map(({ message, raw }) =>
        limiter.run(() =>
          delivery.send('bench.example.net', {
            envelope: envelopeOf(message, message.activeRecipients, message.from.email),
            raw,
          }),
        ),
      ),
    );
    const handed = results.filter((result) => result.every((recipient) => recipient.accepted)).length;
    const deadline = Date.now() + 120_000;
    while (options.relayed() - before < handed && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sample);
    for (const [pid, ms] of cpuByPid()) cpuLast.set(pid, ms);
    let cpuMs = 0;
    for (const [pid, ms] of cpuLast) cpuMs += ms - (cpuBefore.get(pid) ?? 0);
    const relayed = options.relayed() - before;
    return {
      reference: 'Postfix + OpenDKIM → mail server',
      messages: options.messages.length,
      'messages/s': Math.round(relayed / seconds),
      'CPU ms/msg': (cpuMs / Math.max(1, relayed)).toFixed(3),
      note: `${run('postconf', ['-h', 'mail_version']).trim()}, ${handed} taken, ${relayed} relayed; RSA-2048 relaxed/relaxed, STARTTLS`,
    };
  } finally {
    delivery.close();
    stop();
  }
}
