// Who is logged in, and what their role may do: the console offers only that (the server
// refuses the rest anyway). An admin may do everything a publisher or a subscriber may.

export const session = { subject: null, role: null };

/** Whether the role may do what needs one of `roles` ("admin", "publisher", "subscriber"). */
export function can(...roles) {
  return session.role === "admin" || roles.includes(session.role);
}

/** Show the elements marked data-roles="..." only to the roles named there. */
export function applyRoles(root = document) {
  for (const node of root.querySelectorAll("[data-roles]")) {
    node.hidden = !can(...node.dataset.roles.split(/\s+/));
  }
}
