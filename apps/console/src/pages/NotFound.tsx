import { Link } from '../router';

export function NotFoundPage({ path }: { path: string }) {
  return (
    <>
      <h1>No such page</h1>
      <p>
        The console has no page at <code>{path}</code>. <Link to="/">Go to the overview</Link>.
      </p>
    </>
  );
}
