import type {
  ApiKeySummary,
  AuditPage,
  DomainSummary,
  DomainVerification,
  ReturnPathVerification,
  ErrorAnswer,
  InboundFilters,
  InboundMessageDetails,
  InboundMessageList,
  InboundRule,
  InboundSettings,
  IssuedApiKey,
  IssueKeyRequest,
  Me,
  MemberSummary,
  MessageDetails,
  MessageFilters,
  MessageList,
  Overview,
  Role,
  SignInLinkAnswer,
  SuppressionList,
  SuppressionResults,
  SendAnswer,
  Template,
  TemplateFields,
  TemplateSummary,
  TemplateValidation,
  TemplateVersion,
} from './types';

/** Calls of `/console/api/`: the session cookie rides along, state changes carry the CSRF token of `me`. */

const BASE = '/console/api';

/** A refused or failed call, with the server's words (the catalogue's Message) for the page to show. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: number | null,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => {};

/** The token every POST/PUT/DELETE carries, from `GET /console/api/me`. */
export function useCsrfToken(token: string): void {
  csrfToken = token;
}

/** What to do when the server says the session is gone (401): the app goes to the sign-in page. */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

async function call<T>(method: string, path: string, body?: unknown, options: { quiet401?: boolean } = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  let response: Response;
  try {
    response = await fetch(BASE + path, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch {
    throw new ApiFailure(0, null, 'The console cannot reach the server. Check that it is running, then try again.');
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: a proxy's or a crashed server's page; its status is all there is to say.
  }
  if (!response.ok) {
    const answer = parsed as Partial<ErrorAnswer> | undefined;
    const message =
      typeof answer?.Message === 'string' && answer.Message !== ''
        ? answer.Message
        : `The server answered ${response.status} ${response.statusText}.`;
    if (response.status === 401 && !options.quiet401) onSignedOut();
    throw new ApiFailure(response.status, typeof answer?.ErrorCode === 'number' ? answer.ErrorCode : null, message);
  }
  return parsed as T;
}

const query = (params: Record<string, string | number | undefined>): string => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== '') search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
};
const segment = encodeURIComponent;

export const api = {
  requestSignInLink: (email: string) => call<SignInLinkAnswer>('POST', '/sign-in/link', { email }),
  openSession: (token: string) => call<Me>('POST', '/sign-in/session', { token }, { quiet401: true }),
  signOut: () => call<void>('POST', '/sign-out'),
  me: () => call<Me>('GET', '/me', undefined, { quiet401: true }),

  overview: () => call<Overview>('GET', '/overview'),

  messages: (filters: MessageFilters, count: number, offset: number) =>
    call<MessageList>('GET', `/messages${query({ ...filters, count, offset })}`),
  message: (id: string) => call<MessageDetails>('GET', `/messages/${segment(id)}`),

  suppressions: (filters: { email?: string; origin?: string; fromdate?: string; todate?: string }) =>
    call<SuppressionList>('GET', `/suppressions${query(filters)}`),
  suppress: (email: string) => call<SuppressionResults>('POST', '/suppressions', { EmailAddress: email }),
  unsuppress: (email: string) => call<SuppressionResults>('DELETE', `/suppressions/${segment(email)}`),

  domains: () => call<{ domains: DomainSummary[] }>('GET', '/domains'),
  addDomain: (name: string) => call<DomainSummary>('POST', '/domains', { name }),
  verifyDomain: (name: string) => call<DomainVerification>('POST', `/domains/${segment(name)}/verify`),
  verifyReturnPath: (name: string) =>
    call<ReturnPathVerification>('POST', `/domains/${segment(name)}/return-path/verify`),
  removeDomain: (name: string) => call<void>('DELETE', `/domains/${segment(name)}`),

  keys: () => call<{ keys: ApiKeySummary[] }>('GET', '/keys'),
  issueKey: (request: IssueKeyRequest) => call<IssuedApiKey>('POST', '/keys', request),
  revokeKey: (id: string) => call<ApiKeySummary>('DELETE', `/keys/${segment(id)}`),

  members: () => call<{ members: MemberSummary[] }>('GET', '/members'),
  inviteMember: (email: string, role: Role) => call<MemberSummary>('POST', '/members', { email, role }),
  changeRole: (email: string, role: Role) => call<MemberSummary>('PUT', `/members/${segment(email)}`, { role }),
  removeMember: (email: string) => call<void>('DELETE', `/members/${segment(email)}`),

  templates: () => call<{ TotalCount: number; Templates: TemplateSummary[] }>('GET', '/templates'),
  template: (idOrAlias: string) => call<Template>('GET', `/templates/${segment(idOrAlias)}`),
  templateVersions: (idOrAlias: string) =>
    call<{ TotalCount: number; Versions: TemplateVersion[] }>('GET', `/templates/${segment(idOrAlias)}/versions`),
  createTemplate: (fields: TemplateFields) => call<TemplateSummary>('POST', '/templates', fields),
  editTemplate: (idOrAlias: string, fields: TemplateFields) =>
    call<TemplateSummary>('PUT', `/templates/${segment(idOrAlias)}`, fields),
  deleteTemplate: (idOrAlias: string) => call<void>('DELETE', `/templates/${segment(idOrAlias)}`),
  validateTemplate: (fields: {
    Subject: string | null;
    HtmlBody: string | null;
    TextBody: string | null;
    TemplateType: string;
    LayoutTemplate: string;
    TestRenderModel: unknown;
  }) => call<TemplateValidation>('POST', '/templates/validate', fields),
  sendTestOfTemplate: (idOrAlias: string, from: string, model: unknown) =>
    call<SendAnswer>('POST', `/templates/${segment(idOrAlias)}/test`, { From: from, TemplateModel: model }),

  audit: (count: number, offset: number) => call<AuditPage>('GET', `/audit${query({ count, offset })}`),

  inboundSettings: () => call<InboundSettings>('GET', '/inbound/server'),
  changeInboundSettings: (change: {
    InboundHookUrl?: string | null;
    RawEmailEnabled?: boolean;
    InboundDomain?: string | null;
  }) => call<InboundSettings>('PUT', '/inbound/server', change),
  verifyInboundDomain: () => call<InboundSettings>('PUT', '/inbound/server/verify-domain'),
  inboundMessages: (filters: InboundFilters, count: number, offset: number) =>
    call<InboundMessageList>('GET', `/inbound/messages${query({ ...filters, count, offset })}`),
  inboundMessage: (id: string) => call<InboundMessageDetails>('GET', `/inbound/messages/${segment(id)}`),
  retryInbound: (id: string) => call<{ Message: string }>('PUT', `/inbound/messages/${segment(id)}/retry`),
  bypassInbound: (id: string) => call<{ Message: string }>('PUT', `/inbound/messages/${segment(id)}/bypass`),
  inboundRules: () => call<{ TotalCount: number; InboundRules: InboundRule[] }>('GET', '/inbound/rules'),
  addInboundRule: (rule: string) => call<InboundRule>('POST', '/inbound/rules', { Rule: rule }),
  removeInboundRule: (id: number) => call<unknown>('DELETE', `/inbound/rules/${id}`),
};

/** The words to show for any failure. */
export function messageOf(error: unknown): string {
  if (error instanceof ApiFailure) return error.message;
  if (error instanceof Error) return `Something went wrong in the console: ${error.message}`;
  return 'Something went wrong in the console.';
}
