import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runAdmin } from '@sendline/admin';

/** The repository root (the console runs from there, as `npm run admin` does). */
export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface AdminRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = unknown>(): T;
}

function adminRun(args: string[], code: number | null, stdout: string, stderr: string): AdminRun {
  return {
    code,
    stdout,
    stderr,
    json<T>() {
      try {
        return JSON.parse(stdout) as T;
      } catch {
        throw new Error(`admin ${args.join(' ')} printed no JSON (exit ${code}): ${stdout}${stderr}`);
      }
    },
  };
}

/**
 * Runs one console command in this process, as `apps/admin/src/main.ts` does (`runAdmin` with the arguments, its
 * output and exit code), with the test's environment (service addresses, SENDLINE_SECRET_KEY) plus `env`. Fails
 * when the command does not end within `timeoutMs`. Starting a process per command cost the suite a second and
 * a half of TypeScript loading each (some seventy commands); `adminProcess` runs the command line itself, for the
 * tests of what only a process shows (its exit status, that it ends on its own).
 */
export async function admin(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<AdminRun> {
  let stdout = '';
  let stderr = '';
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`admin ${args.join(' ')} did not end within ${timeoutMs} ms; stderr: ${stderr}`)),
      timeoutMs,
    );
  });
  try {
    const code = await Promise.race([
      runAdmin(args, {
        env: { ...process.env, ...env },
        output: { write: (text) => void (stdout += text) },
        errors: { write: (text) => void (stderr += text) },
      }),
      timeout,
    ]);
    return adminRun(args, code, stdout, stderr);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs the console as a user does: `node --import tsx apps/admin/src/main.ts …` in its own process, with
 * the test's environment (service addresses, SENDLINE_SECRET_KEY) plus `env`. Fails when the process
 * does not end on its own within `timeoutMs` (a console command must not hang).
 */
export function adminProcess(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<AdminRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'apps/admin/src/main.ts', ...args], {
      cwd: repositoryRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`admin ${args.join(' ')} did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve(adminRun(args, code, stdout, stderr));
    });
  });
}

/** Runs a command that must succeed, and returns its JSON. */
export async function adminJson<T = unknown>(args: string[], env: Record<string, string> = {}): Promise<T> {
  const run = await admin([...args, '--json'], env);
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return run.json<T>();
}
