import type { Message } from '@chat-service/client';
import { clear, h } from './dom';
import { displayName, mentionedIn } from './format';

export interface ComposerOptions {
  /** Distinguishes the channel's composer from the thread's (ids, labels). */
  key: string;
  label: string;
  placeholder: string;
  /** The channel's members' external ids (mention autocomplete). */
  members: () => string[];
  /** A send: the text (maybe empty with a file), the members it mentions, the quoted message, the file. */
  onSend: (text: string, mentions: string[], quote: Message | null, file: File | null) => void;
  onTyping: (typing: boolean) => void;
  /** The text changed and then rested (a draft to save; empty: none). */
  onDraft?: (text: string) => void;
}

/** How long the text must rest before it is saved as a draft. */
const DRAFT_IDLE_MS = 600;

/** How long after the last key a typing indicator is withdrawn. */
const TYPING_IDLE_MS = 3000;

/**
 * A message box: Enter sends, Shift+Enter starts a new line, `@` offers the channel's members (arrow keys,
 * Enter or Tab to pick, Escape to close), Escape also drops a quoted reply. Attach picks an image or file.
 */
export class Composer {
  readonly el: HTMLFormElement;
  private readonly input: HTMLTextAreaElement;
  private readonly suggestions: HTMLUListElement;
  private readonly quoteBox: HTMLDivElement;
  private readonly fileBox: HTMLDivElement;
  private quote: Message | null = null;
  private file: File | null = null;
  private options: string[] = [];
  private active = 0;
  private typingTimer: ReturnType<typeof setTimeout> | undefined;
  private draftTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly o: ComposerOptions) {
    const inputId = `composer-${o.key}`;
    const listId = `mentions-${o.key}`;
    this.input = h('textarea', {
      id: inputId,
      rows: 1,
      placeholder: o.placeholder,
      autocomplete: 'off',
      role: 'combobox',
      'aria-autocomplete': 'list',
      'aria-controls': listId,
      'aria-expanded': 'false',
      onkeydown: (e: Event) => this.onKey(e as KeyboardEvent),
      oninput: () => this.onInput(),
      // leaving the box closes the list, unless the focus came back (a click on an option keeps it)
      onblur: () => setTimeout(() => document.activeElement !== this.input && this.closeSuggestions(), 150),
    });
    this.suggestions = h('ul', {
      id: listId,
      role: 'listbox',
      class: 'suggestions',
      hidden: true,
      'aria-label': 'Members',
    });
    this.quoteBox = h('div', { class: 'quote-draft', hidden: true });
    this.fileBox = h('div', { class: 'file-draft', hidden: true });
    const fileInput = h('input', {
      type: 'file',
      id: `file-${o.key}`,
      class: 'visually-hidden',
      onchange: (e: Event) => {
        const input = e.target as HTMLInputElement;
        const file = input.files?.[0];
        if (file) this.setFile(file);
        input.value = '';
      },
    });
    this.el = h(
      'form',
      {
        class: 'composer',
        onsubmit: (e: Event) => {
          e.preventDefault();
          this.send();
        },
      },
      this.quoteBox,
      this.fileBox,
      h('label', { for: inputId, class: 'visually-hidden' }, o.label),
      h(
        'div',
        { class: 'composer-row' },
        h(
          'label',
          {
            for: `file-${o.key}`,
            class: 'button attach',
            title: 'Attach an image or file',
            tabindex: 0,
            onkeydown: (e: Event) => {
              const k = (e as KeyboardEvent).key;
              if (k === 'Enter' || k === ' ') {
                e.preventDefault();
                fileInput.click();
              }
            },
          },
          'Attach',
        ),
        fileInput,
        h('div', { class: 'composer-input' }, this.input, this.suggestions),
        h('button', { type: 'submit', class: 'primary send' }, 'Send'),
      ),
    );
  }

  focus(): void {
    this.input.focus();
  }

  get text(): string {
    return this.input.value;
  }

  /** Whether the user is typing here now (a draft from another device must not overwrite it). */
  get focused(): boolean {
    return document.activeElement === this.input;
  }

  /** Shows a saved draft's text (no draft save follows). */
  setText(text: string): void {
    clearTimeout(this.draftTimer);
    this.draftTimer = undefined;
    this.input.value = text;
  }

  /** Quote a message in the next send (a reply); null drops it. */
  setQuote(msg: Message | null): void {
    this.quote = msg;
    this.quoteBox.hidden = !msg;
    if (msg) {
      clear(
        this.quoteBox,
        h(
          'span',
          {},
          `Replying to ${displayName(msg.user)}: `,
          h('q', {}, msg.content.slice(0, 80) || (msg.attachment ? msg.attachment.filename : '')),
        ),
        h('button', { type: 'button', class: 'link', onclick: () => this.setQuote(null) }, 'Cancel reply'),
      );
      this.focus();
    }
  }

  /** Stage a file: it goes with the next send, the text as its caption. */
  setFile(file: File | null): void {
    this.file = file;
    this.fileBox.hidden = !file;
    if (file) {
      clear(
        this.fileBox,
        h('span', {}, 'Attached: ', h('strong', {}, file.name)),
        h(
          'button',
          { type: 'button', class: 'link', onclick: () => this.setFile(null) },
          'Remove attachment',
        ),
      );
      this.focus();
    }
  }

  private send(): void {
    const text = this.input.value.trim();
    if (!text && !this.file) return;
    clearTimeout(this.draftTimer); // the send takes the draft with it
    this.draftTimer = undefined;
    this.o.onSend(text, mentionedIn(text, this.o.members()), this.quote, this.file);
    this.input.value = '';
    this.setQuote(null);
    this.setFile(null);
    this.stopTyping();
    this.closeSuggestions();
  }

  private onKey(e: KeyboardEvent): void {
    if (!this.suggestions.hidden && this.options.length) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        this.active =
          (this.active + (e.key === 'ArrowDown' ? 1 : this.options.length - 1)) % this.options.length;
        this.renderSuggestions();
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        this.pick(this.options[this.active]!);
        return;
      }
    }
    if (e.key === 'Escape') {
      if (!this.suggestions.hidden) this.closeSuggestions();
      else this.setQuote(null);
      return;
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.send();
    }
  }

  private onInput(): void {
    if (this.o.onDraft) {
      clearTimeout(this.draftTimer);
      this.draftTimer = setTimeout(() => {
        this.draftTimer = undefined;
        this.o.onDraft!(this.input.value);
      }, DRAFT_IDLE_MS);
    }
    if (this.input.value.trim()) {
      if (this.typingTimer === undefined) this.o.onTyping(true);
      clearTimeout(this.typingTimer);
      this.typingTimer = setTimeout(() => this.stopTyping(), TYPING_IDLE_MS);
    } else {
      this.stopTyping();
    }
    const word = this.mentionWord();
    if (word === null) return this.closeSuggestions();
    this.options = this.o
      .members()
      .filter((m) => m.startsWith(word))
      .slice(0, 8);
    this.active = 0;
    this.renderSuggestions();
  }

  private stopTyping(): void {
    if (this.typingTimer === undefined) return;
    clearTimeout(this.typingTimer);
    this.typingTimer = undefined;
    this.o.onTyping(false);
  }

  /** The partial `@name` the caret is in, or null. */
  private mentionWord(): string | null {
    const before = this.input.value.slice(0, this.input.selectionStart);
    const m = /(^|\s)@([^\s@]*)$/.exec(before);
    return m ? m[2]! : null;
  }

  private pick(member: string): void {
    const caret = this.input.selectionStart;
    const before = this.input.value.slice(0, caret).replace(/@([^\s@]*)$/, `@${member} `);
    this.input.value = before + this.input.value.slice(caret);
    this.input.setSelectionRange(before.length, before.length);
    this.closeSuggestions();
    this.input.focus();
  }

  private renderSuggestions(): void {
    const open = this.options.length > 0;
    this.suggestions.hidden = !open;
    this.input.setAttribute('aria-expanded', String(open));
    clear(
      this.suggestions,
      this.options.map((m, i) =>
        h(
          'li',
          {
            id: `${this.suggestions.id}-${i}`,
            role: 'option',
            'aria-selected': String(i === this.active),
            onmousedown: (e: Event) => {
              e.preventDefault();
              this.pick(m);
            },
          },
          `@${m}`,
        ),
      ),
    );
    if (open) this.input.setAttribute('aria-activedescendant', `${this.suggestions.id}-${this.active}`);
    else this.input.removeAttribute('aria-activedescendant');
  }

  private closeSuggestions(): void {
    this.options = [];
    this.renderSuggestions();
  }
}
