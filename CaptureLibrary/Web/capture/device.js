// What the <hello> says of the device: read from the user agent and the screen (a pure function, for tests).

/** `{deviceName, model, systemVersion, screenWidth, screenHeight, screenScale}` of a user agent string and a screen. */
export function describeDevice(userAgent, screen, pixelRatio) {
  let m, model = "Desktop", systemVersion;
  if ((m = userAgent.match(/\((iPhone|iPad|iPod)[^)]*? OS (\d+[_\d]*)/))) {
    model = m[1];
    systemVersion = "iOS " + m[2].replace(/_/g, ".");
  } else if ((m = userAgent.match(/Android ([\d.]+)(?:; ([^;)]+))?/))) {
    systemVersion = "Android " + m[1];
    model = (m[2] || "").replace(/ Build\/.*/, "").trim();
    // Chrome's reduced user agent says "K"; Firefox names the form factor, not the model.
    if (!model || ["K", "Mobile", "Tablet"].includes(model)) model = "Android";
  } else if ((m = userAgent.match(/Windows NT [\d.]+|Mac OS X [\d_.]+|CrOS|Linux/))) systemVersion = m[0].replace(/_/g, ".");
  return { deviceName: `${browserName(userAgent)} on ${model}`, model, systemVersion, screenWidth: screen.width, screenHeight: screen.height,
    screenScale: Math.min(100, Math.max(0.1, pixelRatio || 1)) };
}

function browserName(userAgent) {
  if (/; wv\)/.test(userAgent)) return "a WebView";
  if (/EdgA?\//.test(userAgent)) return "Edge";
  if (/CriOS|Chrome\//.test(userAgent)) return "Chrome";
  if (/FxiOS|Firefox\//.test(userAgent)) return "Firefox";
  return /Safari\//.test(userAgent) ? "Safari" : "a WebView";
}

/** This browser's description. */
export const thisDevice = () => describeDevice(navigator.userAgent, screen, devicePixelRatio);
