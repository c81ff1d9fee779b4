import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The repository root (the console runs from there, as `npm run admin` does). */
export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface AdminRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json<T = unknown>(): T;
}

/**
 * Runs the console as a user does: `node --import tsx apps/admin/src/main.ts …` in its own process, with
 * the test's environment (service addresses, SENDLINE_SECRET_KEY) plus `env`. Fails when the process
 * does not end on its own within `timeoutMs` (a console command must not hang).
 */
export function admin(args: string[], env: Record<string, string> = {}, timeoutMs = 30_000): Promise<AdminRun> {
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
      resolve({
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
      });
    });
  });
}

/** Runs a command that must succeed, and returns its JSON. */
export async function adminJson<T = unknown>(args: string[], env: Record<string, string> = {}): Promise<T> {
  const run = await admin([...args, '--json'], env);
  if (run.code !== 0) throw new Error(`admin ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return run.json<T>();
}
