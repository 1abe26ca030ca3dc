// The text of a thrown value: an Error's message, anything else (a string, a rejection reason) as
// String() spells it. For log fields and error messages that quote a cause.
export const errText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
