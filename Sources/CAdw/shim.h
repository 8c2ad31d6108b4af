#pragma once
// GTK 4 and libadwaita for the desktop client, plus the few helpers Swift
// cannot call directly: GObject cast macros, variadic functions, and
// construct-only properties. Only the `Adwaita` seam module imports this.
#include <adwaita.h>
#include <glib-unix.h>

// --- Casts (the G_TYPE_CHECK_INSTANCE_CAST macros; checked in debug builds of GLib) ---
static inline GtkWidget *flowd_widget(gpointer p) { return GTK_WIDGET(p); }
static inline GtkWindow *flowd_window(gpointer p) { return GTK_WINDOW(p); }
static inline GtkBox *flowd_box(gpointer p) { return GTK_BOX(p); }
static inline GtkLabel *flowd_label(gpointer p) { return GTK_LABEL(p); }
static inline GtkButton *flowd_button(gpointer p) { return GTK_BUTTON(p); }
static inline GtkToggleButton *flowd_toggle_button(gpointer p) { return GTK_TOGGLE_BUTTON(p); }
static inline GtkCheckButton *flowd_check_button(gpointer p) { return GTK_CHECK_BUTTON(p); }
static inline GtkStack *flowd_stack(gpointer p) { return GTK_STACK(p); }
static inline GtkEditable *flowd_editable(gpointer p) { return GTK_EDITABLE(p); }
static inline GtkText *flowd_text(gpointer p) { return GTK_TEXT(p); }
static inline GtkTextView *flowd_text_view(gpointer p) { return GTK_TEXT_VIEW(p); }
static inline GtkSpinButton *flowd_spin_button(gpointer p) { return GTK_SPIN_BUTTON(p); }
static inline GtkSwitch *flowd_switch(gpointer p) { return GTK_SWITCH(p); }
static inline GtkCalendar *flowd_calendar(gpointer p) { return GTK_CALENDAR(p); }
static inline GtkPopover *flowd_popover(gpointer p) { return GTK_POPOVER(p); }
static inline GtkMenuButton *flowd_menu_button(gpointer p) { return GTK_MENU_BUTTON(p); }
static inline GtkImage *flowd_image(gpointer p) { return GTK_IMAGE(p); }
static inline GtkSpinner *flowd_spinner(gpointer p) { return GTK_SPINNER(p); }
static inline GtkLevelBar *flowd_level_bar(gpointer p) { return GTK_LEVEL_BAR(p); }
static inline GtkFlowBox *flowd_flow_box(gpointer p) { return GTK_FLOW_BOX(p); }
static inline GtkScrolledWindow *flowd_scrolled_window(gpointer p) { return GTK_SCROLLED_WINDOW(p); }
static inline GtkAccessible *flowd_accessible(gpointer p) { return GTK_ACCESSIBLE(p); }
static inline GApplication *flowd_g_application(gpointer p) { return G_APPLICATION(p); }
static inline GtkApplication *flowd_gtk_application(gpointer p) { return GTK_APPLICATION(p); }
static inline AdwApplicationWindow *flowd_adw_application_window(gpointer p) { return ADW_APPLICATION_WINDOW(p); }
static inline AdwHeaderBar *flowd_adw_header_bar(gpointer p) { return ADW_HEADER_BAR(p); }
static inline AdwWindowTitle *flowd_adw_window_title(gpointer p) { return ADW_WINDOW_TITLE(p); }
static inline AdwPreferencesGroup *flowd_adw_preferences_group(gpointer p) { return ADW_PREFERENCES_GROUP(p); }
static inline AdwPreferencesRow *flowd_adw_preferences_row(gpointer p) { return ADW_PREFERENCES_ROW(p); }
static inline AdwActionRow *flowd_adw_action_row(gpointer p) { return ADW_ACTION_ROW(p); }
static inline AdwEntryRow *flowd_adw_entry_row(gpointer p) { return ADW_ENTRY_ROW(p); }
static inline AdwStatusPage *flowd_adw_status_page(gpointer p) { return ADW_STATUS_PAGE(p); }
static inline AdwToastOverlay *flowd_adw_toast_overlay(gpointer p) { return ADW_TOAST_OVERLAY(p); }
static inline AdwClamp *flowd_adw_clamp(gpointer p) { return ADW_CLAMP(p); }

// --- Accessibility (gtk_accessible_update_* are variadic) ---
static inline void flowd_accessible_set_label(GtkAccessible *a, const char *text) {
    gtk_accessible_update_property(a, GTK_ACCESSIBLE_PROPERTY_LABEL, text, -1);
}
static inline void flowd_accessible_set_description(GtkAccessible *a, const char *text) {
    gtk_accessible_update_property(a, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}
static inline void flowd_accessible_set_placeholder(GtkAccessible *a, const char *text) {
    gtk_accessible_update_property(a, GTK_ACCESSIBLE_PROPERTY_PLACEHOLDER, text, -1);
}
static inline void flowd_accessible_set_required(GtkAccessible *a, gboolean required) {
    gtk_accessible_update_property(a, GTK_ACCESSIBLE_PROPERTY_REQUIRED, required, -1);
}
static inline void flowd_accessible_set_invalid(GtkAccessible *a, gboolean invalid) {
    gtk_accessible_update_state(a, GTK_ACCESSIBLE_STATE_INVALID,
                                invalid ? GTK_ACCESSIBLE_INVALID_TRUE : GTK_ACCESSIBLE_INVALID_FALSE, -1);
}
/// Sets DESCRIBED_BY to `by` (one element; NULL clears it).
static inline void flowd_accessible_described_by(GtkAccessible *a, GtkAccessible *by) {
    if (by) gtk_accessible_update_relation(a, GTK_ACCESSIBLE_RELATION_DESCRIBED_BY, by, NULL, -1);
    else gtk_accessible_reset_relation(a, GTK_ACCESSIBLE_RELATION_DESCRIBED_BY);
}
/// Drops the LABEL property: GTK 4.8 joins it with the labelled-by texts, so a
/// mnemonic button would be read "_Back Back".
static inline void flowd_accessible_reset_label(GtkAccessible *a) {
    gtk_accessible_reset_property(a, GTK_ACCESSIBLE_PROPERTY_LABEL);
}
/// Drops the labelled-by relation, so the LABEL property alone names the widget.
static inline void flowd_accessible_reset_labelled_by(GtkAccessible *a) {
    gtk_accessible_reset_relation(a, GTK_ACCESSIBLE_RELATION_LABELLED_BY);
}

/// A widget of `type` with an accessible role other than its class default
/// (`accessible-role` is a construct-only property, set through g_object_new).
static inline GtkWidget *flowd_widget_new_with_role(GType type, GtkAccessibleRole role) {
    return GTK_WIDGET(g_object_new(type, "accessible-role", role, NULL));
}

// --- Settings ---
static inline gboolean flowd_settings_enable_animations(void) {
    GtkSettings *settings = gtk_settings_get_default();
    gboolean enabled = TRUE;
    if (settings) g_object_get(settings, "gtk-enable-animations", &enabled, NULL);
    return enabled;
}

// --- libdispatch's main queue, for GLib's loop to drain (MainQueueBridge.swift) ---
// The hooks Foundation's RunLoop uses on Linux: the main queue's wake-up
// eventfd, and the function that runs the jobs queued on it. Not public API
// of libdispatch, but stable since the Linux port (swift-corelibs-foundation
// depends on them).
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);
