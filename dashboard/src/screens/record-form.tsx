import { useState } from 'preact/hooks';
import { isFileField, type Collection, type FieldDefinition, type Json } from '../api';
import { FileInput } from './file-cells';

/** A form value as typed → the JSON the API takes for the field's type (undefined = leave out). */
export function toValue(def: FieldDefinition, raw: string | boolean): Json | undefined {
  if (isFileField(def)) return undefined; // files travel as multipart parts, never in data
  if (def.type === 'boolean') return raw === true;
  const s = String(raw);
  if (s.trim() === '') return undefined;
  if (def.type === 'number' || def.type === 'integer') return Number(s);
  if (def.type === 'json' || def.type === 'list' || (def.type === 'relation' && isList(def))) {
    try {
      return JSON.parse(s) as Json;
    } catch {
      return s;
    }
  }
  return s;
}

export function fromValue(def: FieldDefinition, v: Json | undefined): string | boolean {
  if (isFileField(def)) return '';
  if (def.type === 'boolean') return v === true;
  if (v === undefined || v === null) return '';
  if (def.type === 'json' || def.type === 'list' || (def.type === 'relation' && isList(def))) return JSON.stringify(v);
  return String(v);
}

/** A relation holding a list of ids (max_items above 1). */
const isList = (def: FieldDefinition): boolean => (def.max_items ?? 1) > 1;

/** Ids of the records a relation field may point at, by field (the relation picker's choices). */
export type RelationChoices = { [field: string]: string[] };

function RelationPicker(props: { name: string; def: FieldDefinition; value: string; choices: string[]; onChange: (v: string) => void }) {
  const list = isList(props.def);
  const chosen: string[] = list ? ((): string[] => {
    try {
      const v = JSON.parse(props.value || '[]') as unknown;
      return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
    } catch {
      return [];
    }
  })() : props.value ? [props.value] : [];
  const options = [...new Set([...chosen, ...props.choices])];
  return (
    <select
      name={props.name}
      multiple={list}
      onChange={(e) => {
        const el = e.currentTarget as HTMLSelectElement;
        if (list) props.onChange(JSON.stringify([...el.selectedOptions].map((o) => o.value)));
        else props.onChange(el.value);
      }}
    >
      {!list && <option value="" selected={chosen.length === 0}>(none)</option>}
      {options.map((id) => (
        <option key={id} value={id} selected={chosen.includes(id)}>
          {id}
        </option>
      ))}
    </select>
  );
}

export type FormValues = { [field: string]: string | boolean };

/** Files chosen in the form, by file field. */
export type ChosenFiles = { [field: string]: File[] };

/**
 * One input per field of the collection, typed by the field's type; file fields get an upload
 * control (`onFiles`) showing what the record (`held`) holds.
 */
export function RecordFields(props: {
  collection: Collection;
  values: FormValues;
  onChange: (v: FormValues) => void;
  idPrefix: string;
  choices?: RelationChoices;
  held?: { [field: string]: Json };
  onFiles?: (field: string, files: File[]) => void;
}) {
  return (
    <div class="record-fields">
      {Object.entries(props.collection.fields).map(([name, def]) => {
        const v = props.values[name];
        const set = (x: string | boolean) => props.onChange({ ...props.values, [name]: x });
        const label = `${name} (${def.type}${def.type === 'relation' ? ` → ${def.collection ?? '?'}${isList(def) ? `, up to ${def.max_items}` : ''}` : ''}${def.required ? ', required' : ''})`;
        if (isFileField(def)) {
          return <FileInput key={name} name={`${props.idPrefix}-${name}`} label={label} def={def} value={props.held?.[name]} onChange={(files) => props.onFiles?.(name, files)} />;
        }
        if (def.type === 'relation') {
          return (
            <label key={name}>
              {label}
              <RelationPicker name={`${props.idPrefix}-${name}`} def={def} value={typeof v === 'string' ? v : ''} choices={props.choices?.[name] ?? []} onChange={set} />
            </label>
          );
        }
        if (def.type === 'boolean') {
          return (
            <label class="check" key={name}>
              <input type="checkbox" name={`${props.idPrefix}-${name}`} checked={v === true} onChange={(e) => set((e.currentTarget as HTMLInputElement).checked)} />
              {label}
            </label>
          );
        }
        return (
          <label key={name}>
            {label}
            {def.type === 'number' || def.type === 'integer' ? (
              <input
                name={`${props.idPrefix}-${name}`}
                type="number"
                step={def.type === 'number' ? 'any' : '1'}
                value={typeof v === 'string' ? v : ''}
                onInput={(e) => set((e.currentTarget as HTMLInputElement).value)}
              />
            ) : (
              <input
                name={`${props.idPrefix}-${name}`}
                type="text"
                placeholder={def.type === 'json' || def.type === 'list' ? 'JSON' : def.type === 'timestamp' ? '2026-01-01T00:00:00Z' : undefined}
                value={typeof v === 'string' ? v : ''}
                onInput={(e) => set((e.currentTarget as HTMLInputElement).value)}
              />
            )}
          </label>
        );
      })}
    </div>
  );
}

export function dataOf(collection: Collection, values: FormValues): { [f: string]: Json } {
  const out: { [f: string]: Json } = {};
  for (const [name, def] of Object.entries(collection.fields)) {
    const raw = values[name];
    if (raw === undefined) continue;
    const v = toValue(def, raw);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

export function useFormValues(collection: Collection, record?: { [f: string]: Json }) {
  return useState<FormValues>(() =>
    Object.fromEntries(Object.entries(collection.fields).map(([n, d]) => [n, fromValue(d, record?.[n])])),
  );
}
