import { useState, type FormEvent } from 'react';
import { navigate, useRoute } from '../router';
import { useLoad, type Loaded } from './common';

/**
 * A searchable, paged list whose filters are kept in the page's address (a search is a link to share): the Activity
 * and Inbound pages. `names` are the filters the list's endpoint takes, `path` the page's own route.
 */
export function useSearchedList<Name extends string, Page>(
  names: readonly Name[],
  path: string,
  load: (filters: Partial<Record<Name, string>>, offset: number) => Promise<Page>,
): {
  filters: Partial<Record<Name, string>>;
  offset: number;
  list: Loaded<Page>;
  /** Shows the list for these filters from this offset (the same search again reads the list again). */
  go: (filters: Partial<Record<Name, string>>, offset: number) => void;
} {
  const { search } = useRoute();
  const filters: Partial<Record<Name, string>> = {};
  for (const name of names) {
    const value = search.get(name);
    if (value) filters[name] = value;
  }
  const offset = Math.max(0, Number(search.get('offset') ?? 0) || 0);
  const key = JSON.stringify([filters, offset]);
  const list = useLoad(() => load(filters, offset), [key]);
  const go = (next: Partial<Record<Name, string>>, nextOffset: number) => {
    const params = new URLSearchParams();
    for (const name of names) if (next[name]) params.set(name, next[name]);
    if (nextOffset > 0) params.set('offset', String(nextOffset));
    const text = params.toString();
    // The same search again is a fresh look: the address does not change, so the page is read again.
    if (JSON.stringify([next, nextOffset]) === key) list.reload();
    else navigate(`${path}${text ? `?${text}` : ''}`);
  };
  return { filters, offset, list, go };
}

/** One filter of a search form: a text search, a day, or a choice among `choices` (sent lower-cased). */
export interface FilterField<Name extends string> {
  name: Name;
  label: string;
  kind: 'search' | 'date' | 'choice';
  choices?: readonly string[];
  placeholder?: string;
}

/** The search form above a list: every field, Search (blanks trimmed, empty fields left out) and Clear. */
export function SearchFilters<Name extends string>({
  label,
  idPrefix,
  fields,
  initial,
  onSearch,
}: {
  /** The form's accessible name ("Search messages"). */
  label: string;
  /** Each field's id is `<idPrefix>-<name>`. */
  idPrefix: string;
  fields: readonly FilterField<Name>[];
  initial: Partial<Record<Name, string>>;
  onSearch: (filters: Partial<Record<Name, string>>) => void;
}) {
  const [draft, setDraft] = useState<Partial<Record<Name, string>>>(initial);
  const field = (name: Name) => ({
    id: `${idPrefix}-${name}`,
    name,
    value: draft[name] ?? '',
    onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value }),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const trimmed: Partial<Record<Name, string>> = {};
    for (const { name } of fields) {
      const value = draft[name]?.trim();
      if (value) trimmed[name] = value;
    }
    onSearch(trimmed);
  };
  return (
    <form className="card filters" onSubmit={submit} role="search" aria-label={label}>
      {fields.map(({ name, label: fieldLabel, kind, choices, placeholder }) => (
        <div className="field" key={name}>
          <label htmlFor={`${idPrefix}-${name}`}>{fieldLabel}</label>
          {kind === 'choice' ? (
            <select {...field(name)}>
              <option value="">Any</option>
              {(choices ?? []).map((choice) => (
                <option key={choice} value={choice.toLowerCase()}>
                  {choice}
                </option>
              ))}
            </select>
          ) : (
            <input type={kind} {...field(name)} {...(placeholder && { placeholder })} />
          )}
        </div>
      ))}
      <div className="field actions">
        <button type="submit" className="primary">
          Search
        </button>
        <button
          type="button"
          onClick={() => {
            setDraft({});
            onSearch({});
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}
