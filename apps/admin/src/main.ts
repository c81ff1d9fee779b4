/**
 * The console as a command line: `npm run admin -- <group> <command> [options]`
 * (or `node --import tsx apps/admin/src/main.ts …`). `admin --help` lists the commands.
 */
import { loadLocalServicesEnv } from '@sendline/infra';
import { runAdmin } from './run';

// The local services' addresses and SENDLINE_SECRET_KEY from .local/services.env, unless the environment sets them.
loadLocalServicesEnv();
const exitCode = await runAdmin(process.argv.slice(2));
process.exitCode = exitCode;
// Every connection is closed by now; should a library still hold a timer, do not let it keep the console open.
setTimeout(() => process.exit(exitCode), 2000).unref();
