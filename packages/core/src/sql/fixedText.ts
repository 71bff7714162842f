/**
 * A SQL client whose statements keep their text from one call to the next.
 *
 * Effect's client builds a statement's text anew on every call: a segment object for each piece
 * of the template and each value, then the pieces concatenated into a new string. The driver
 * then finds the statement it prepared by that string, and a new string must be hashed whole:
 * create's charge is about 4,000 characters, and building and finding it cost about 16 µs a call
 * (decision 0113). Here a template's text is built once for each shape it takes and the same
 * string is handed over each time, with the call's values as its parameters.
 *
 * A template is the same object on every evaluation of its call site, so its shape is its
 * strings and, for each value, what the value is: a parameter, a constant (`sql.literal`), or a
 * statement such a client made (nested, as the charge nests its work). Any other value (an
 * identifier, `sql.in`, `sql.insert`, a fragment of several pieces) sends the call the way the
 * client would have taken it, its nested statements rebuilt that way too; so does a call to the
 * client with a string (an identifier). The text and parameters are those the client compiles.
 */
import type { Constructor, Statement } from "effect/sql/Statement"
import { isFragment } from "effect/sql/Statement"

/** A call of the client's template tag: its strings (the same object each time) and its values. */
interface Template {
  readonly strings: TemplateStringsArray
  readonly values: ReadonlyArray<unknown>
}

/** What a value of a template is: a parameter, a constant's text, or a nested template by its strings. */
type ShapePart = typeof parameter | string | TemplateStringsArray

const parameter = Symbol("parameter")

/**
 * The template a statement of such a client came from, kept on the statement itself: a
 * statement of one such client (WriteSql's) may be nested in another's.
 */
const templateKey = Symbol("lyre/fixedText/template")

const templateOf = (value: object): Template | undefined =>
  (value as { readonly [templateKey]?: Template })[templateKey]

/** One shape a template has taken, and its text. */
interface Variant {
  readonly shape: ReadonlyArray<ShapePart>
  readonly text: string
}

/** A template's texts: of the shape where every value is a parameter (most templates), and of the others. */
interface Texts {
  plain: string | undefined
  readonly shaped: Array<Variant>
}

/** A value the client would bind as a parameter: anything but a segment or fragment. */
const isParameter = (value: unknown): boolean =>
  typeof value !== "object" || value === null || !("_tag" in value || isFragment(value))

const allParameters = (values: ReadonlyArray<unknown>): boolean => {
  for (let i = 0; i < values.length; i++) if (!isParameter(values[i])) return false
  return true
}

/** The text of `sql.literal(text)`: a fragment of one literal piece without parameters. */
const constantText = (value: object): string | undefined => {
  if (!isFragment(value) || value.segments.length !== 1) return undefined
  const only = value.segments[0]
  return only !== undefined && only._tag === "Literal" && only.params === undefined ? only.value : undefined
}

const sameShape = (a: ReadonlyArray<ShapePart>, b: ReadonlyArray<ShapePart>): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false
  return true
}

/** `client` with fixed texts for its template calls; every other member is the client's own. */
export const fixedTextClient = <Client extends Constructor>(client: Client): Client => {
  const texts = new WeakMap<TemplateStringsArray, Texts>()

  /**
   * Walks a template and those nested in it, in the order their pieces are written: the shape
   * and the parameters; false for a value only the client can place.
   */
  const flatten = (template: Template, shape: Array<ShapePart>, params: Array<unknown>): boolean => {
    for (const value of template.values) {
      if (isParameter(value)) {
        shape.push(parameter)
        params.push(value)
        continue
      }
      const nested = templateOf(value as object)
      if (nested !== undefined) {
        shape.push(nested.strings)
        if (!flatten(nested, shape, params)) return false
        continue
      }
      const text = constantText(value as object)
      if (text === undefined) return false
      shape.push(text)
    }
    return true
  }

  /** The text of a shape: its pieces joined, its parameters numbered `$1`, `$2`, ... as PostgreSQL's compiler numbers them. */
  const textOf = (strings: TemplateStringsArray, shape: ReadonlyArray<ShapePart>): string => {
    let text = ""
    let next = 0
    let count = 0
    const write = (pieces: ReadonlyArray<string>): void => {
      text += pieces[0] ?? ""
      for (let i = 1; i < pieces.length; i++) {
        const part = shape[next++]
        if (part === parameter) text += `$${++count}`
        else if (typeof part === "string") text += part
        else if (part !== undefined) write(part)
        text += pieces[i] ?? ""
      }
    }
    write(strings)
    return text
  }

  /** The call as the client makes it, with nested statements of this client rebuilt the client's way. */
  const asClientWould = (template: Template): Statement<object> =>
    client(
      template.strings,
      ...template.values.map((value) => {
        const nested = typeof value === "object" && value !== null ? templateOf(value) : undefined
        return nested === undefined ? value : asClientWould(nested)
      })
    )

  /** The statement of `text` and `params`, knowing the template it came from. */
  const made = (text: string, params: ReadonlyArray<unknown>, template: Template): Statement<object> => {
    const statement: Statement<object> & { [templateKey]?: Template } = client.unsafe(text, params)
    statement[templateKey] = template
    return statement
  }

  /** The text of a template with nested statements or constants in it, found by its shape. */
  const shapedText = (known: Texts, strings: TemplateStringsArray, shape: Array<ShapePart>): string => {
    for (const candidate of known.shaped) if (sameShape(candidate.shape, shape)) return candidate.text
    const text = textOf(strings, shape)
    known.shaped.push({ shape, text })
    return text
  }

  function fixed(strings: TemplateStringsArray | string, ...values: Array<unknown>): unknown {
    if (typeof strings === "string") return client(strings)
    const template: Template = { strings, values }
    let known = texts.get(strings)
    if (known === undefined) {
      known = { plain: undefined, shaped: [] }
      texts.set(strings, known)
    }
    // Values that are all parameters are the parameters, in order: no walk, no copy.
    if (allParameters(values)) {
      known.plain ??= textOf(
        strings,
        values.map(() => parameter)
      )
      return made(known.plain, values, template)
    }
    const shape: Array<ShapePart> = []
    const params: Array<unknown> = []
    return flatten(template, shape, params)
      ? made(shapedText(known, strings, shape), params, template)
      : asClientWould(template)
  }
  // The client's other members (unsafe, literal, withTransaction, ...) are its own, unchanged.
  return Object.assign(fixed, client) as unknown as Client
}
