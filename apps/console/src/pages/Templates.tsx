import { diffLines } from 'diff';
import { useEffect, useMemo, useState, type FormEvent, type ReactNode } from 'react';
import { api } from '../api/client';
import type {
  Me,
  SendAnswer,
  Template,
  TemplateFields,
  TemplateSummary,
  TemplateType,
  TemplateValidation,
  TemplateValidationSection,
  TemplateVersion,
} from '../api/types';
import { ConfirmButton, ErrorNotice, Show, Time, useAction, useLoad } from '../components/common';
import { previewDocument } from '../htmlPreview';
import { Link, navigate } from '../router';

/**
 * Templates: the list (standard templates and layouts), the editor with a live preview rendered by the server's own
 * renderer (POST /templates/validate against a test model), the versions with a diff between two, and "send a
 * test" to the member's own address. Viewers read and preview; admins and developers change and send.
 */

export function TemplatesPage({ me }: { me: Me }) {
  const list = useLoad(() => api.templates(), []);
  const canWrite = me.can.manageTemplates;
  return (
    <>
      <h1>Templates</h1>
      <p className="muted">
        Postmark-compatible templates (Mustachio: <code>{'{{ name }}'}</code>, <code>{'{{#each items}}'}</code>…) sent
        with <code>POST /email/withTemplate</code> by id or alias. A layout wraps templates around its{' '}
        <code>{'{{{ @content }}}'}</code>. Every save is a new version.
      </p>
      {canWrite ? (
        <p>
          <Link to="/templates/new" className="button primary">
            New template
          </Link>
        </p>
      ) : null}
      <Show loaded={list} what="templates">
        {(data) =>
          data.Templates.length === 0 ? (
            <div className="card empty">
              <p>
                No template yet.{' '}
                {canWrite ? 'Create one with “New template”.' : 'Ask an admin or a developer to create one.'}
              </p>
            </div>
          ) : (
            <>
              <TemplateTable title="Standard templates" templates={data.Templates.filter(isStandard)} />
              <TemplateTable title="Layouts" templates={data.Templates.filter((t) => !isStandard(t))} />
            </>
          )
        }
      </Show>
    </>
  );
}

const isStandard = (t: { TemplateType: TemplateType }) => t.TemplateType !== 'Layout';

function TemplateTable({ title, templates }: { title: string; templates: TemplateSummary[] }) {
  const id = `templates-${title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {templates.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <div className="table-scroll card flush">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Alias</th>
                <th scope="col">Id</th>
                {title === 'Layouts' ? null : <th scope="col">Layout</th>}
                <th scope="col">Active</th>
                <th scope="col">Last version</th>
              </tr>
            </thead>
            <tbody>
              {templates.map((t) => (
                <tr key={t.TemplateId}>
                  <td>
                    <Link to={`/templates/${t.TemplateId}`}>{t.Name}</Link>
                  </td>
                  <td>{t.Alias ? <code>{t.Alias}</code> : <span className="muted">none</span>}</td>
                  <td>{t.TemplateId}</td>
                  {title === 'Layouts' ? null : (
                    <td>{t.LayoutTemplate ? <code>{t.LayoutTemplate}</code> : <span className="muted">none</span>}</td>
                  )}
                  <td>
                    {t.Active ? <span className="badge good">active</span> : <span className="badge">inactive</span>}
                  </td>
                  <td>
                    {t.Version} <span className="muted">·</span> <Time at={t.UpdatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

const EMPTY: TemplateFields = {
  Name: '',
  Alias: '',
  Subject: '',
  HtmlBody: '',
  TextBody: '',
  TemplateType: 'Standard',
  LayoutTemplate: '',
};

function fieldsOf(t: Template): TemplateFields {
  return {
    Name: t.Name,
    Alias: t.Alias ?? '',
    Subject: t.Subject ?? '',
    HtmlBody: t.HtmlBody ?? '',
    TextBody: t.TextBody ?? '',
    TemplateType: t.TemplateType,
    LayoutTemplate: t.LayoutTemplate ?? '',
  };
}

/** `/templates/new` and `/templates/<id or alias>`: the editor, and for a saved template its versions and tests. */
export function TemplatePage({ me, idOrAlias }: { me: Me; idOrAlias: string | null }) {
  const template = useLoad(() => (idOrAlias === null ? Promise.resolve(null) : api.template(idOrAlias)), [idOrAlias]);
  const [round, setRound] = useState(0);
  return (
    <>
      <p>
        <Link to="/templates">← Templates</Link>
      </p>
      <Show loaded={template} what="the template">
        {(loaded) => (
          <>
            <Editor
              key={`${loaded?.TemplateId ?? 'new'}-${loaded?.Version ?? 0}`}
              me={me}
              template={loaded}
              onSaved={(id) => {
                if (loaded === null) navigate(`/templates/${id}`);
                else {
                  template.reload();
                  setRound((n) => n + 1);
                }
              }}
            />
            {loaded !== null ? (
              <>
                {loaded.TemplateType === 'Standard' && me.can.sendTestEmails ? (
                  <SendTest me={me} template={loaded} />
                ) : null}
                <Versions templateId={loaded.TemplateId} round={round} />
              </>
            ) : null}
          </>
        )}
      </Show>
    </>
  );
}

const DEFAULT_MODEL = '{\n  "name": "Ada"\n}';

/** The test model the preview renders against: kept per template in this browser tab only. */
function modelKey(template: Template | null): string {
  return `sendline.templateModel.${template?.TemplateId ?? 'new'}`;
}

function Editor({
  me,
  template,
  onSaved,
}: {
  me: Me;
  template: Template | null;
  onSaved: (templateId: number) => void;
}) {
  const canWrite = me.can.manageTemplates;
  const [fields, setFields] = useState<TemplateFields>(template ? fieldsOf(template) : EMPTY);
  const [model, setModel] = useState(() => sessionStorage.getItem(modelKey(template)) ?? DEFAULT_MODEL);
  const layouts = useLoad(() => api.templates(), []);
  const save = useAction();
  const [saved, setSaved] = useState(false);
  const set = (name: keyof TemplateFields) => (value: string) => {
    setSaved(false);
    setFields((previous) => ({ ...previous, [name]: value }));
  };
  const isLayout = fields.TemplateType === 'Layout';

  useEffect(() => sessionStorage.setItem(modelKey(template), model), [template, model]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const sent: TemplateFields = isLayout ? { ...fields, Subject: '', LayoutTemplate: '' } : fields;
    const ok = await save.run(async () => {
      const answer = template
        ? await api.editTemplate(String(template.TemplateId), sent)
        : await api.createTemplate(sent);
      // The test model goes with the new template to its own page.
      if (!template) sessionStorage.setItem(`sendline.templateModel.${answer.TemplateId}`, model);
      onSaved(answer.TemplateId);
    });
    setSaved(ok);
  };

  const layoutChoices = (layouts.data?.Templates ?? []).filter(
    (t) => t.TemplateType === 'Layout' && t.Alias && t.TemplateId !== template?.TemplateId,
  );

  return (
    <>
      <h1>{template ? template.Name : 'New template'}</h1>
      {template ? (
        <p className="muted">
          Id {template.TemplateId}
          {template.Alias ? (
            <>
              , alias <code>{template.Alias}</code>
            </>
          ) : null}
          , version {template.Version}
        </p>
      ) : null}
      {!canWrite ? (
        <p className="notice">Your role reads templates and previews them; it does not change them.</p>
      ) : null}
      <div className="editor">
        <form className="card stack" onSubmit={submit} aria-labelledby="template-form-title">
          <h2 id="template-form-title">{!canWrite ? 'Template' : template ? 'Edit' : 'Create'}</h2>
          <div className="row">
            <TextField
              id="template-name"
              label="Name"
              value={fields.Name}
              onChange={set('Name')}
              readOnly={!canWrite}
              required
            />
            <TextField
              id="template-alias"
              label="Alias"
              value={fields.Alias}
              onChange={set('Alias')}
              readOnly={!canWrite}
              placeholder="welcome"
            />
          </div>
          <div className="row">
            <div className="field">
              <label htmlFor="template-type">Type</label>
              <select
                id="template-type"
                value={fields.TemplateType}
                disabled={!canWrite}
                onChange={(event) => set('TemplateType')(event.target.value)}
              >
                <option value="Standard">Standard</option>
                <option value="Layout">Layout</option>
              </select>
            </div>
            {isLayout ? null : (
              <div className="field grow">
                <label htmlFor="template-layout">Layout</label>
                <select
                  id="template-layout"
                  value={fields.LayoutTemplate}
                  disabled={!canWrite}
                  onChange={(event) => set('LayoutTemplate')(event.target.value)}
                >
                  <option value="">none</option>
                  {layoutChoices.map((t) => (
                    <option key={t.TemplateId} value={t.Alias!}>
                      {t.Name} ({t.Alias})
                    </option>
                  ))}
                  {fields.LayoutTemplate && !layoutChoices.some((t) => t.Alias === fields.LayoutTemplate) ? (
                    <option value={fields.LayoutTemplate}>{fields.LayoutTemplate}</option>
                  ) : null}
                </select>
              </div>
            )}
          </div>
          {isLayout ? null : (
            <TextField
              id="template-subject"
              label="Subject"
              value={fields.Subject}
              onChange={set('Subject')}
              readOnly={!canWrite}
            />
          )}
          <Source
            id="template-html"
            label="HTML body"
            value={fields.HtmlBody}
            onChange={set('HtmlBody')}
            readOnly={!canWrite}
            rows={12}
          />
          <Source
            id="template-text"
            label="Text body"
            value={fields.TextBody}
            onChange={set('TextBody')}
            readOnly={!canWrite}
            rows={6}
          />
          <ErrorNotice error={save.error} title={template ? 'Not saved' : 'Not created'} />
          {saved && !save.error ? (
            <p className="notice success" role="status">
              Saved.
            </p>
          ) : null}
          {canWrite ? (
            <div className="actions-row">
              <button type="submit" className="primary" disabled={save.busy}>
                {save.busy ? 'Saving…' : template ? 'Save a new version' : 'Create template'}
              </button>
              {template ? (
                <ConfirmButton
                  label="Delete"
                  accessibleLabel={`Delete the template ${template.Name}`}
                  question={`Delete “${template.Name}”? Sends naming it are refused from now on (ErrorCode 1101).`}
                  confirmLabel="Delete the template"
                  action={async () => {
                    await api.deleteTemplate(String(template.TemplateId));
                    navigate('/templates');
                  }}
                />
              ) : null}
            </div>
          ) : null}
        </form>
        <Preview fields={fields} model={model} onModel={setModel} />
      </div>
    </>
  );
}

function TextField({
  id,
  label,
  value,
  onChange,
  readOnly,
  required,
  placeholder,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  readOnly: boolean;
  required?: boolean;
  placeholder?: string;
}) {
  return (
    <div className="field grow">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        value={value}
        readOnly={readOnly}
        required={required}
        placeholder={placeholder}
        onChange={(event) => onChange(event.target.value)}
      />
    </div>
  );
}

function Source({
  id,
  label,
  value,
  onChange,
  readOnly,
  rows,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string) => void;
  readOnly: boolean;
  rows: number;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="source"
        rows={rows}
        spellCheck={false}
        value={value}
        readOnly={readOnly}
        onChange={(event) => onChange(event.target.value)}
      />
    </div>
  );
}

/** The model as JSON, or why it is not. */
function parseModel(text: string): { ok: true; value: unknown } | { ok: false; reason: string } {
  try {
    return { ok: true, value: text.trim() === '' ? {} : (JSON.parse(text) as unknown) };
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}

/** The server renders the template against the test model 400 ms after the last keystroke (nothing is saved). */
function Preview({ fields, model, onModel }: { fields: TemplateFields; model: string; onModel: (m: string) => void }) {
  const parsed = useMemo(() => parseModel(model), [model]);
  const [rendering, setRendering] = useState<TemplateValidation | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const isLayout = fields.TemplateType === 'Layout';
  const { Subject, HtmlBody, TextBody, TemplateType, LayoutTemplate } = fields;

  useEffect(() => {
    if (!parsed.ok) return;
    let current = true;
    const timer = setTimeout(() => {
      api
        .validateTemplate({
          // An empty part is no part (as a save clears it): a layout has no subject.
          Subject: isLayout || Subject === '' ? null : Subject,
          HtmlBody: HtmlBody === '' ? null : HtmlBody,
          TextBody: TextBody === '' ? null : TextBody,
          TemplateType,
          LayoutTemplate: isLayout ? '' : LayoutTemplate,
          TestRenderModel: parsed.value,
        })
        .then(
          (answer) => {
            if (!current) return;
            setRendering(answer);
            setError(undefined);
          },
          (failure: unknown) => current && setError(failure),
        );
    }, 400);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [Subject, HtmlBody, TextBody, TemplateType, LayoutTemplate, isLayout, parsed]);

  return (
    <section className="card stack preview" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      <div className="field">
        <label htmlFor="template-model">Test model (JSON)</label>
        <textarea
          id="template-model"
          className="source"
          rows={6}
          spellCheck={false}
          value={model}
          onChange={(event) => onModel(event.target.value)}
          aria-invalid={!parsed.ok}
        />
      </div>
      {!parsed.ok ? (
        <p className="notice error" role="alert">
          The test model is not JSON: {parsed.reason}
        </p>
      ) : null}
      {rendering?.SuggestedTemplateModel !== undefined ? (
        <p>
          <button
            type="button"
            className="small"
            onClick={() => onModel(JSON.stringify(rendering.SuggestedTemplateModel, null, 2))}
          >
            Use the suggested model
          </button>{' '}
          <span className="muted">built from the placeholders the template uses</span>
        </p>
      ) : null}
      <ErrorNotice error={error} title="Could not render" />
      {rendering ? (
        <div aria-live="polite" className="stack">
          <p>
            {rendering.AllContentIsValid ? (
              <span className="badge good">All content is valid</span>
            ) : (
              <span className="badge bad">Some content is not valid</span>
            )}
          </p>
          {isLayout ? null : (
            <Part title="Subject" source={Subject} section={rendering.Subject}>
              {(text) => <p className="rendered-subject">{text}</p>}
            </Part>
          )}
          <Part title="HTML body" source={HtmlBody} section={rendering.HtmlBody}>
            {(html) => (
              <iframe
                className="html-body"
                title="The rendered HTML body"
                sandbox=""
                srcDoc={previewDocument(html, false)}
              />
            )}
          </Part>
          <Part title="Text body" source={TextBody} section={rendering.TextBody}>
            {(text) => <pre className="text-body">{text}</pre>}
          </Part>
        </div>
      ) : null}
    </section>
  );
}

/** One part's rendering, or its errors at their line and character with the line itself and a caret under it. */
function Part({
  title,
  source,
  section,
  children,
}: {
  title: string;
  source: string;
  section: TemplateValidationSection;
  children: (rendered: string) => ReactNode;
}) {
  const lines = source.split(/\r?\n/);
  return (
    <div className="part">
      <h3>{title}</h3>
      {section.ContentIsValid ? (
        section.RenderedContent === null || section.RenderedContent === '' ? (
          <p className="muted">Empty.</p>
        ) : (
          children(section.RenderedContent)
        )
      ) : (
        <ul className="validation-errors" aria-label={`Errors in the ${title.toLowerCase()}`}>
          {section.ValidationErrors.map((e, index) => {
            const line = e.Line > 0 ? lines[e.Line - 1] : undefined;
            return (
              <li key={index} className="notice error">
                <strong>
                  Line {e.Line}, character {e.CharacterPosition}:
                </strong>{' '}
                {e.Message}
                {line !== undefined ? (
                  <pre className="error-line">
                    {line}
                    {'\n'}
                    {' '.repeat(Math.max(0, e.CharacterPosition - 1))}^
                  </pre>
                ) : null}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

/** "Send a test": the template rendered with the test model and sent, live, to the member's own address. */
function SendTest({ me, template }: { me: Me; template: Template }) {
  const domains = useLoad(() => api.domains(), []);
  const [from, setFrom] = useState('');
  const [answer, setAnswer] = useState<SendAnswer | null>(null);
  const { busy, error, run } = useAction();
  const verified = domains.data?.domains.find((d) => d.verified)?.name;
  const sender = from || (verified ? `test@${verified}` : '');

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setAnswer(null);
    await run(async () => {
      const parsed = parseModel(sessionStorage.getItem(modelKey(template)) ?? DEFAULT_MODEL);
      if (!parsed.ok) throw new Error(`the test model is not JSON: ${parsed.reason}`);
      setAnswer(await api.sendTestOfTemplate(String(template.TemplateId), sender, parsed.value));
    });
  };

  return (
    <form className="card stack send-test" onSubmit={submit} aria-labelledby="send-test-title">
      <h2 id="send-test-title">Send a test</h2>
      <p className="muted">
        Renders the saved version {template.Version} with the test model above and sends it to your own address,{' '}
        <strong>{me.email}</strong>. It is a real message: delivered, in Activity, counted in the allowance.
      </p>
      <div className="row">
        <div className="field grow">
          <label htmlFor="test-from">From (an address on a verified domain)</label>
          <input
            id="test-from"
            type="email"
            required
            value={sender}
            onChange={(event) => setFrom(event.target.value)}
            placeholder="test@example.com"
          />
        </div>
      </div>
      <ErrorNotice error={error} title="Not sent" />
      {answer ? (
        <p className="notice success" role="status">
          Sent to {answer.To}.{' '}
          {answer.MessageID ? <Link to={`/activity/${answer.MessageID}`}>Follow it in Activity</Link> : null}
        </p>
      ) : null}
      <div>
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Sending…' : `Send a test to ${me.email}`}
        </button>
      </div>
    </form>
  );
}

const DIFFED: { field: keyof TemplateVersion; label: string }[] = [
  { field: 'Name', label: 'Name' },
  { field: 'Alias', label: 'Alias' },
  { field: 'TemplateType', label: 'Type' },
  { field: 'LayoutTemplate', label: 'Layout' },
  { field: 'Subject', label: 'Subject' },
  { field: 'HtmlBody', label: 'HTML body' },
  { field: 'TextBody', label: 'Text body' },
];

/** Every version, newest first, and what changed between two of them (a line diff per field). */
function Versions({ templateId, round }: { templateId: number; round: number }) {
  const versions = useLoad(() => api.templateVersions(String(templateId)), [templateId, round]);
  const [older, setOlder] = useState<number | null>(null);
  const [newer, setNewer] = useState<number | null>(null);
  return (
    <section className="card stack" aria-labelledby="versions-title">
      <h2 id="versions-title">Versions</h2>
      <Show loaded={versions} what="the versions">
        {(data) => {
          const all = data.Versions;
          const b = all.find((v) => v.Version === newer) ?? all[0];
          const a = all.find((v) => v.Version === older) ?? all[1] ?? all[0];
          return (
            <>
              <div className="table-scroll">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Version</th>
                      <th scope="col">Made</th>
                      <th scope="col">Name</th>
                      <th scope="col">Alias</th>
                      <th scope="col">Subject</th>
                    </tr>
                  </thead>
                  <tbody>
                    {all.map((v) => (
                      <tr key={v.Version}>
                        <td>{v.Version}</td>
                        <td>
                          <Time at={v.UpdatedAt} />
                        </td>
                        <td>{v.Name}</td>
                        <td>{v.Alias ?? <span className="muted">none</span>}</td>
                        <td className="wrap">{v.Subject ?? <span className="muted">none</span>}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {all.length < 2 || !a || !b ? (
                <p className="muted">One version so far: save a change to compare two.</p>
              ) : (
                <>
                  <div className="row">
                    <VersionChoice
                      id="diff-from"
                      label="Compare version"
                      versions={all}
                      value={a.Version}
                      onChange={setOlder}
                    />
                    <VersionChoice
                      id="diff-to"
                      label="with version"
                      versions={all}
                      value={b.Version}
                      onChange={setNewer}
                    />
                  </div>
                  <VersionDiff from={a} to={b} />
                </>
              )}
            </>
          );
        }}
      </Show>
    </section>
  );
}

function VersionChoice({
  id,
  label,
  versions,
  value,
  onChange,
}: {
  id: string;
  label: string;
  versions: TemplateVersion[];
  value: number;
  onChange: (version: number) => void;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(Number(event.target.value))}>
        {versions.map((v) => (
          <option key={v.Version} value={v.Version}>
            {v.Version}
          </option>
        ))}
      </select>
    </div>
  );
}

function VersionDiff({ from, to }: { from: TemplateVersion; to: TemplateVersion }) {
  const changed = DIFFED.filter(({ field }) => (from[field] ?? '') !== (to[field] ?? ''));
  if (changed.length === 0) {
    return (
      <p className="muted">
        Versions {from.Version} and {to.Version} are the same.
      </p>
    );
  }
  return (
    <div className="stack" aria-label={`Changes from version ${from.Version} to version ${to.Version}`}>
      {changed.map(({ field, label }) => {
        const before = String(from[field] ?? '');
        const after = String(to[field] ?? '');
        const parts = diffLines(
          before.endsWith('\n') ? before : `${before}\n`,
          after.endsWith('\n') ? after : `${after}\n`,
        );
        return (
          <div key={field}>
            <h3>{label}</h3>
            <pre className="diff">
              {parts.flatMap((part, index) =>
                part.value
                  .replace(/\n$/, '')
                  .split('\n')
                  .map((line, n) => (
                    <span key={`${index}-${n}`} className={part.added ? 'added' : part.removed ? 'removed' : 'same'}>
                      {part.added ? '+ ' : part.removed ? '- ' : '  '}
                      {line}
                      {'\n'}
                    </span>
                  )),
              )}
            </pre>
          </div>
        );
      })}
    </div>
  );
}
