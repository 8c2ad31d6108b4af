import CAdw

/// Horizontal or vertical.
package enum Orientation: Sendable {
    case horizontal, vertical

    var gtk: GtkOrientation { self == .horizontal ? GTK_ORIENTATION_HORIZONTAL : GTK_ORIENTATION_VERTICAL }
}

/// `GtkBox`: children in a row or a column.
@MainActor
package final class Box: Widget {
    package init(_ orientation: Orientation, spacing: Int = 0) {
        super.init(gtk_box_new(orientation.gtk, Int32(spacing)))
    }

    package func append(_ child: Widget) { gtk_box_append(flowd_box(raw), child.widget) }
    package func remove(_ child: Widget) { gtk_box_remove(flowd_box(raw), child.widget) }

    /// Puts `child` right after `sibling` (first when nil); other children keep their place (and focus).
    package func insert(_ child: Widget, after sibling: Widget?) {
        gtk_box_insert_child_after(flowd_box(raw), child.widget, sibling?.widget)
    }
}

/// `AdwClamp`: keeps its child at a readable width on wide windows.
@MainActor
package final class Clamp: Widget {
    package init(maximumSize: Int, child: Widget) {
        super.init(adw_clamp_new())
        adw_clamp_set_maximum_size(flowd_adw_clamp(raw), Int32(maximumSize))
        adw_clamp_set_child(flowd_adw_clamp(raw), child.widget)
    }
}

/// `GtkScrolledWindow` that scrolls vertically only.
@MainActor
package final class ScrolledWindow: Widget {
    package init(child: Widget) {
        super.init(gtk_scrolled_window_new())
        let sw = flowd_scrolled_window(raw)
        gtk_scrolled_window_set_policy(sw, GTK_POLICY_NEVER, GTK_POLICY_AUTOMATIC)
        gtk_scrolled_window_set_child(sw, child.widget)
        gtk_scrolled_window_set_propagate_natural_height(sw, 0)
    }

    /// Scrolls to the end (a failed submit's message under the last button).
    package func scrollToEnd() {
        if let adjustment = gtk_scrolled_window_get_vadjustment(flowd_scrolled_window(raw)) {
            gtk_adjustment_set_value(
                adjustment, gtk_adjustment_get_upper(adjustment) - gtk_adjustment_get_page_size(adjustment))
        }
    }

    /// Scrolls to the start (the top of a page whose focus is further down).
    package func scrollToStart() {
        if let adjustment = gtk_scrolled_window_get_vadjustment(flowd_scrolled_window(raw)) {
            gtk_adjustment_set_value(adjustment, gtk_adjustment_get_lower(adjustment))
        }
    }

    /// For a multi-line text view: a minimum height and a frame-like look.
    package func setMinimumContentHeight(_ height: Int) {
        gtk_scrolled_window_set_min_content_height(flowd_scrolled_window(raw), Int32(height))
    }
}

/// `GtkFlowBox` of chips: children wrap onto new lines; selection is left to the children.
@MainActor
package final class FlowBox: Widget {
    package init(spacing: Int) {
        super.init(gtk_flow_box_new())
        let box = flowd_flow_box(raw)
        gtk_flow_box_set_selection_mode(box, GTK_SELECTION_NONE)
        gtk_flow_box_set_row_spacing(box, UInt32(spacing))
        gtk_flow_box_set_column_spacing(box, UInt32(spacing))
        gtk_flow_box_set_homogeneous(box, 0)
        gtk_flow_box_set_max_children_per_line(box, 8)
    }

    package func append(_ child: Widget) {
        gtk_flow_box_insert(flowd_flow_box(raw), child.widget, -1)
        // The flow box wraps each child in a focusable GtkFlowBoxChild; the chip itself takes focus.
        if let wrapper = gtk_widget_get_parent(child.widget) { gtk_widget_set_focusable(wrapper, 0) }
    }
}

/// How a stack changes its visible page.
/// The raw value names it in traces (`FLOWD_GTK_TRACE`).
package enum StackTransition: String, Sendable, Equatable {
    /// The new page slides in from the end side (forward) or the start side (back).
    case slideForward = "slide-forward", slideBack = "slide-back"
    case crossfade, none

    var gtk: GtkStackTransitionType {
        switch self {
        case .slideForward: GTK_STACK_TRANSITION_TYPE_SLIDE_LEFT
        case .slideBack: GTK_STACK_TRANSITION_TYPE_SLIDE_RIGHT
        case .crossfade: GTK_STACK_TRANSITION_TYPE_CROSSFADE
        case .none: GTK_STACK_TRANSITION_TYPE_NONE
        }
    }
}

/// `GtkStack`: one page visible at a time, changed with a transition.
@MainActor
package final class Stack: Widget {
    package init() {
        super.init(gtk_stack_new())
        gtk_stack_set_hhomogeneous(flowd_stack(raw), 1)
        gtk_stack_set_vhomogeneous(flowd_stack(raw), 0)
        gtk_stack_set_interpolate_size(flowd_stack(raw), 1)
    }

    package func add(_ child: Widget, name: String) {
        gtk_stack_add_named(flowd_stack(raw), child.widget, name)
    }

    package func remove(_ child: Widget) { gtk_stack_remove(flowd_stack(raw), child.widget) }

    /// Shows `child` with `transition`. GTK mirrors the slide directions in
    /// right-to-left locales itself ("slide left" is "towards the start").
    package func show(_ child: Widget, transition: StackTransition, duration milliseconds: Int = 250) {
        let stack = flowd_stack(raw)
        gtk_stack_set_transition_duration(stack, UInt32(milliseconds))
        gtk_stack_set_transition_type(stack, transition.gtk)
        gtk_stack_set_visible_child(stack, child.widget)
    }

    /// True while a transition animates (the outgoing page is still drawn).
    package var isTransitionRunning: Bool { gtk_stack_get_transition_running(flowd_stack(raw)) != 0 }

    /// Runs `action` whenever a transition starts or ends.
    package func onTransitionRunningChanged(_ action: @escaping @MainActor () -> Void) {
        Signal.notify(self, "transition-running", action)
    }
}
