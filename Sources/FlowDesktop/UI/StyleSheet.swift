/// The few looks libadwaita's own style classes do not give.
enum StyleSheet {
    static let css = """
        /* "Step 2 of 4": a row of segments that fill as the form moves on. */
        levelbar.step-segments block { min-height: 6px; border-radius: 3px; margin: 0 2px; }
        levelbar.step-segments block.filled { background-color: @accent_bg_color; }
        levelbar.step-segments block.empty { background-color: alpha(currentColor, 0.15); }
        levelbar.step-segments trough { background: none; border: none; box-shadow: none; padding: 0; }

        /* Errors under a field and under the main button. */
        label.field-error { color: @error_color; }
        /* A warning (flow format 2): said, never in the way. */
        label.field-warning { color: @warning_color; }

        /* Chips: toggle buttons shaped like pills, filled with the accent colour when chosen. */
        button.chip { border-radius: 9999px; padding: 6px 16px; }
        button.chip:checked { background-color: @accent_bg_color; color: @accent_fg_color; }

        /* Review: the answer reads first, its label is the quiet part. */
        row.review-answer label.title { font-size: 0.9em; opacity: 0.7; }
        row.review-answer label.subtitle { font-size: 1em; opacity: 1; }
        row.review-status { color: @warning_color; }
        row.review-status label.title { font-weight: bold; }

        /* The multi-line text input: a card like the boxed lists around it. */
        scrolledwindow.multiline { border-radius: 12px; }
        scrolledwindow.multiline textview { background: none; }
        scrolledwindow.multiline:focus-within { outline: 2px solid alpha(@accent_color, 0.5); outline-offset: -2px; }

        /* The password input: shaped like the entry rows around it. */
        entry.secure-field {
            min-height: 50px; padding: 0 12px; border-radius: 12px;
            background-color: @card_bg_color; color: @card_fg_color;
            box-shadow: 0 0 0 1px rgba(0, 0, 0, 0.03), 0 1px 3px 1px rgba(0, 0, 0, 0.07), 0 2px 6px 2px rgba(0, 0, 0, 0.03);
        }
        entry.secure-field:focus-within { outline: 2px solid alpha(@accent_color, 0.5); outline-offset: -2px; }

        /* Review's Edit buttons read as links. */
        button.edit-link { color: @accent_color; }

        /* The success page's check. */
        statuspage.success-page image.icon { color: @success_color; }

        /* The screen-reader announcement: present for assistive technologies, invisible on screen. */
        label.announcement { opacity: 0; font-size: 1px; min-height: 0; margin: 0; padding: 0; }
        """
}
