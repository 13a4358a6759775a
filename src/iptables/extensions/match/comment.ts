/**
 * `-m comment` (`libxt_comment.c`, kernel `xt_comment.c`): a note that always matches. At most
 * 255 bytes (`XT_MAX_COMMENT_LEN` 256 with the NUL): iptables 1.8.9 loads a longer one cut to
 * 255 bytes without a word (1.8.11 refuses it); we cut it as 1.8.9 does and report a warning. iptables-save quotes it as
 * `xtables_save_string` does.
 *
 * @module
 */
import { diagnostic } from '../../../model/errors.js';
import type { ExtensionContext, MatchExtension, OptionOccurrence } from '../types.js';
import { argOf, missing, saveString, unknownOption } from '../values.js';
import { truncateUtf8, utf8Length } from '../../../model/limits.js';

/** `XT_MAX_COMMENT_LEN` - 1 (include/uapi/linux/netfilter/xt_comment.h). */
export const MAX_COMMENT_LENGTH = 255;

/** Options of `-m comment`. */
export interface CommentOptions {
  readonly comment: string;
}

function parse(occurrences: readonly OptionOccurrence[], ctx: ExtensionContext): CommentOptions {
  let comment: string | undefined;
  for (const o of occurrences) {
    if (o.name !== 'comment') unknownOption('comment', o);
    const text = argOf(o);
    // xt_comment_info.comment is 256 bytes: the limit counts UTF-8 bytes, not characters.
    const cut = truncateUtf8(text, MAX_COMMENT_LENGTH);
    if (utf8Length(text) > MAX_COMMENT_LENGTH) {
      // strncpy cuts bytes: a character across byte 255 leaves its first bytes in the kernel,
      // which iptables-save prints raw; a string cannot hold them, so they are dropped here.
      const partial = utf8Length(cut) < MAX_COMMENT_LENGTH ? `; the character across byte ${MAX_COMMENT_LENGTH} is dropped whole (the kernel keeps its first ${MAX_COMMENT_LENGTH - utf8Length(cut)} byte${MAX_COMMENT_LENGTH - utf8Length(cut) === 1 ? '' : 's'}, which iptables-save prints raw)` : '';
      ctx.warn?.(diagnostic('COMMENT_TOO_LONG', `comment is ${utf8Length(text)} bytes long; iptables 1.8.9 loads the rule and keeps the first ${MAX_COMMENT_LENGTH} bytes (1.8.11 refuses it)${partial}`, o.argSpan ?? o.span, text.slice(0, 20) + '…'));
    }
    comment = cut;
  }
  if (comment === undefined) missing(ctx, 'comment', 'option "--comment" must be specified');
  return { comment };
}

/** `-m comment`. */
export const comment: MatchExtension<CommentOptions> = {
  kind: 'match',
  name: 'comment',
  family: 'both',
  options: [{ name: 'comment', arg: true }],
  parse,
  save(o) {
    return `--comment ${saveString(o.comment)}`;
  },
  lower() {
    return () => true;
  },
};
