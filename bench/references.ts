/**
 * The references bench:e2e prints beside the sender's figures, measured in the same run on the same machine:
 *
 * - the raw cost of composing and DKIM-signing one message, in a loop on one core (the sender's floor of CPU work);
 * - nodemailer's SMTP pool (the sender's own transport, same pool size, STARTTLS) sending pre-signed messages
 *   straight to the same mail server, as many in flight as the sender allows (the floor of the SMTP side);
 * - opt-in (BENCH_PEER=postfix, bench/postfix.ts): Postfix with OpenDKIM relaying the same messages to it.
 */
import {
  composeMessage,
  envelopeOf,
  RelayRouter,
  signMessage,
  SmtpDelivery,
  type DkimSigningKey,
} from '@sendline/infra';
import type { MessageAcceptedData } from '@sendline/domain';
import { Limiter } from '@sendline/sender';

export interface ReferenceRow {
  reference: string;
  messages: number;
  'messages/s': number;
  'CPU ms/msg': string;
  note: string;
}

const cpuMsNow = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Compose + sign `count` messages one after the other (after a warm-up), CPU per message. */
export async function composeAndSignLoop(
  message: (i: number) => MessageAcceptedData,
  key: DkimSigningKey,
  count: number,
): Promise<ReferenceRow> {
  for (let i = 0; i < 200; i++) await signMessage(await composeMessage(message(i)), key);
  const cpu = cpuMsNow();
  const started = performance.now();
  let bytes = 0;
  for (let i = 0; i < count; i++) bytes += (await signMessage(await composeMessage(message(i)), key)).length;
  const cpuMs = cpuMsNow() - cpu;
  return {
    reference: 'compose + DKIM-sign, a loop on one core',
    messages: count,
    'messages/s': Math.round(count / ((performance.now() - started) / 1000)),
    'CPU ms/msg': (cpuMs / count).toFixed(3),
    note: `MailComposer + RSA-2048 relaxed/relaxed; ${Math.round(bytes / count)} bytes a message`,
  };
}

/** The messages signed before the clock starts, then sent to the mail server through nodemailer's pool. */
export async function presignedToSink(
  port: number,
  raws: readonly { message: MessageAcceptedData; raw: Buffer }[],
  options: { poolSize: number; concurrency: number },
): Promise<ReferenceRow> {
  const delivery = new SmtpDelivery(new RelayRouter('127.0.0.1', port), {
    heloName: 'bench.sendline.test',
    poolSize: options.poolSize,
  });
  const limiter = new Limiter(options.concurrency);
  const send = ({ message, raw }: (typeof raws)[number]) =>
    limiter.run(() =>
      delivery.send('bench.example.net', {
        envelope: envelopeOf(message, message.activeRecipients, message.from.email),
        raw,
      }),
    );
  // Warm-up: the pool's connections opened and upgraded (STARTTLS) before the clock starts, with messages of their
  // own (sent again in the measured run, each of these was received twice by the mail server).
  await Promise.all(raws.slice(0, options.poolSize).map(send));
  const measured = raws.slice(options.poolSize);
  const cpu = cpuMsNow();
  const started = performance.now();
  const results = await Promise.all(measured.map(send));
  const seconds = (performance.now() - started) / 1000;
  const cpuMs = cpuMsNow() - cpu;
  delivery.close();
  const accepted = results.filter((result) => result.every((recipient) => recipient.accepted)).length;
  return {
    reference: 'nodemailer pool → mail server, pre-signed',
    messages: measured.length,
    'messages/s': Math.round(accepted / seconds),
    'CPU ms/msg': (cpuMs / measured.length).toFixed(3),
    note: `${options.poolSize} connections, ${options.concurrency} in flight, STARTTLS; ${accepted} accepted`,
  };
}
