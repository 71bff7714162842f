/**
 * Timestamps as the interface and the statements write them: `2026-11-30T03:41:07.512Z`, what
 * `Date.prototype.toISOString` gives.
 *
 * V8 formats a date through its C++ `FormatDate` and `snprintf`, about 7 thousand instructions a
 * call counted with callgrind; a create formats six (its time, its deadline, the charge's time,
 * the task's two dates, its first poll), which was 3.5 % of its instructions and about a third of
 * what it executed beyond the bare handler, which formats three (docs/decisions/0117-*). This
 * takes the days since the epoch to a calendar date with Howard Hinnant's `civil_from_days` and
 * makes the string from its character codes. Times outside the years 1970-9999, or not a whole
 * millisecond, go to `toISOString` itself, which writes the expanded years and throws for an
 * invalid time.
 */

const dayMillis = 86_400_000
/** 10000-01-01T00:00:00.000Z: from here `toISOString` writes a six-digit year with its sign. */
const tenThousandYears = 253_402_300_800_000

const zero = 48
const tens = (n: number): number => zero + Math.floor(n / 10)
const units = (n: number): number => zero + (n % 10)

/** `new Date(millis).toISOString()`. */
export const isoTimestamp = (millis: number): string => {
  if (!(millis >= 0 && millis < tenThousandYears) || !Number.isInteger(millis)) return new Date(millis).toISOString()
  const days = Math.floor(millis / dayMillis)
  let rest = millis - days * dayMillis
  // civil_from_days (https://howardhinnant.github.io/date_algorithms.html), for days >= 0: the
  // year counted from March, so that the leap day falls at its end.
  const shifted = days + 719_468
  const era = Math.floor(shifted / 146_097)
  const dayOfEra = shifted - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1_460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365
  )
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1_000)
  const milliseconds = rest - seconds * 1_000
  const century = Math.floor(year / 100)
  // One string made from its character codes: joining the fields' strings cost more than the
  // arithmetic above.
  return String.fromCharCode(
    tens(century),
    units(century),
    tens(year % 100),
    units(year % 100),
    45, // -
    tens(month),
    units(month),
    45,
    tens(day),
    units(day),
    84, // T
    tens(hours),
    units(hours),
    58, // :
    tens(minutes),
    units(minutes),
    58,
    tens(seconds),
    units(seconds),
    46, // .
    zero + Math.floor(milliseconds / 100),
    tens(milliseconds % 100),
    units(milliseconds),
    90 // Z
  )
}

/** `date.toISOString()`. */
export const isoOfDate = (date: Date): string => isoTimestamp(date.getTime())
