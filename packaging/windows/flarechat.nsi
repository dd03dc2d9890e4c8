; Flarechat installer for Windows (NSIS 3, Modern UI 2). Per-user install: no admin rights,
; no UAC prompt; the app goes to %LOCALAPPDATA%\Programs\Flarechat.
;
;   makensis /DVERSION=0.1.0 /DDIST_DIR=..\out\dist\flarechat ^
;            /DOUTFILE=..\out\flarechat-0.1.0-setup.exe packaging\windows\flarechat.nsi
;
; DIST_DIR is the PyInstaller onedir (flarechat.exe, flarechat-cli.exe, _internal\).
; Installs: the app, a Start-menu shortcut, an uninstaller registered in "Installed apps".
; The uninstaller removes exactly what was installed (never the whole folder blindly) and
; keeps the user's settings and conversations (%APPDATA%\Flarechat, %LOCALAPPDATA%\Flarechat).

Unicode true
ManifestDPIAware true
RequestExecutionLevel user
SetCompressor /SOLID lzma

!ifndef VERSION
  !error "pass /DVERSION=x.y.z (flarechat.__version__)"
!endif
!ifndef DIST_DIR
  !error "pass /DDIST_DIR=path\to\dist\flarechat (the PyInstaller onedir)"
!endif
!ifndef OUTFILE
  !define OUTFILE "flarechat-${VERSION}-setup.exe"
!endif

!define APP_NAME "Flarechat"
!define APP_EXE "flarechat.exe"
!define PUBLISHER "The Flarechat team"
!define UNINSTALL_KEY "Software\Microsoft\Windows\CurrentVersion\Uninstall\${APP_NAME}"

!include "MUI2.nsh"
!include "FileFunc.nsh"

Name "${APP_NAME}"
OutFile "${OUTFILE}"
InstallDir "$LOCALAPPDATA\Programs\${APP_NAME}"
InstallDirRegKey HKCU "${UNINSTALL_KEY}" "InstallLocation"

VIProductVersion "${VERSION}.0"
VIAddVersionKey "ProductName" "${APP_NAME}"
VIAddVersionKey "ProductVersion" "${VERSION}"
VIAddVersionKey "FileVersion" "${VERSION}"
VIAddVersionKey "FileDescription" "${APP_NAME} installer"
VIAddVersionKey "CompanyName" "${PUBLISHER}"
VIAddVersionKey "LegalCopyright" "MIT licence"

!define MUI_ICON "${__FILEDIR__}\flarechat.ico"
!define MUI_UNICON "${__FILEDIR__}\flarechat.ico"
!define MUI_ABORTWARNING
!define MUI_FINISHPAGE_RUN "$INSTDIR\${APP_EXE}"
!define MUI_FINISHPAGE_RUN_TEXT "Start ${APP_NAME}"

!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_PAGE_FINISH
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Section "Flarechat" SecApp
  SectionIn RO
  SetOutPath "$INSTDIR"
  ; A previous version's _internal may hold files this one no longer ships.
  RMDir /r "$INSTDIR\_internal"
  File /r "${DIST_DIR}\*.*"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  CreateShortcut "$SMPROGRAMS\${APP_NAME}.lnk" "$INSTDIR\${APP_EXE}" "" "$INSTDIR\${APP_EXE}" 0

  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayName" "${APP_NAME}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "Publisher" "${PUBLISHER}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "DisplayIcon" "$INSTDIR\${APP_EXE}"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "InstallLocation" "$INSTDIR"
  WriteRegStr HKCU "${UNINSTALL_KEY}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegStr HKCU "${UNINSTALL_KEY}" "QuietUninstallString" '"$INSTDIR\uninstall.exe" /S'
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoModify" 1
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "NoRepair" 1
  ${GetSize} "$INSTDIR" "/S=0K" $0 $1 $2
  IntFmt $0 "0x%08X" $0
  WriteRegDWORD HKCU "${UNINSTALL_KEY}" "EstimatedSize" "$0"
SectionEnd

Section "Uninstall"
  Delete "$SMPROGRAMS\${APP_NAME}.lnk"
  Delete "$INSTDIR\${APP_EXE}"
  Delete "$INSTDIR\flarechat-cli.exe"
  RMDir /r "$INSTDIR\_internal"
  Delete "$INSTDIR\uninstall.exe"
  ; Only removed when empty: never delete files this installer did not put there.
  RMDir "$INSTDIR"
  DeleteRegKey HKCU "${UNINSTALL_KEY}"
SectionEnd
