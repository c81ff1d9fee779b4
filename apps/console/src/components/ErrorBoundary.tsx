import { Component, type ErrorInfo, type ReactNode } from 'react';

/** Never a blank page: a page that throws while rendering is replaced by its error in words and a way back. */
export class ErrorBoundary extends Component<{ children: ReactNode }, { error: Error | null }> {
  override state: { error: Error | null } = { error: null };

  static getDerivedStateFromError(error: Error) {
    return { error };
  }

  override componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error('console page failed', error, info.componentStack);
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <main className="centered" id="main">
        <div className="card narrow">
          <h1>This page failed</h1>
          <div className="notice error" role="alert">
            The console hit an error showing this page: {this.state.error.message}
          </div>
          <p>
            <a href="/console/">Back to the overview</a> or reload the page.
          </p>
        </div>
      </main>
    );
  }
}
